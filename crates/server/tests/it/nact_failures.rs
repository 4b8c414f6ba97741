//! Tools that ran and failed (N-ACT §7: a 5xx tells the executor to retry without asking the
//! model, so only temporary failures are 5xx): 422 permanent, 409 outcome unknown, 502 an
//! unusable backend answer, 503 temporary with `Retry-After`, 504 timeout.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Spawn, failures, with_failing_functions};

async fn failing_server() -> crate::support::Server {
    with_failing_functions(Spawn::bundled().with_sources(vec![failures()]))
        .start()
        .await
}

#[tokio::test]
async fn division_by_zero_is_422_not_retryable_with_a_prompt() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke(
            "/nact/tools/divide_numbers",
            &[("dividend", json!(1)), ("divisor", json!(0))],
        )
        .await;
    // Issue #22.3: a permanent failure is not a 5xx (N-ACT §7).
    let problem = reply.expect_problem(422);
    assert_eq!(problem["retryable"], false);
    assert_eq!(problem["type"], "urn:toolhost:problem:tool-failed");
    assert_eq!(problem["code"], "division_by_zero", "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("divide by zero"),
        "{problem}"
    );
    let prompt = problem["prompt"]
        .as_str()
        .unwrap_or_else(|| panic!("the tool's prompt is passed on: {problem}"));
    assert!(prompt.contains("non-zero divisor"), "{prompt}");
    assert!(
        reply.header("retry-after").is_none(),
        "no Retry-After on a permanent failure"
    );
    assert!(
        problem.get("errors").is_none(),
        "a tool failure is not a parameter error"
    );
}

/// Issue #12: the tool may have acted before it failed. Not a 5xx (an executor would retry it
/// without asking), not retryable, and the prompt tells the model to check first.
#[tokio::test]
async fn an_unknown_outcome_is_409_never_retryable_with_a_prompt_to_check() {
    let server = failing_server().await;
    let reply = server.invoke("/nact/tools/uncertain_tool", &[]).await;
    let problem = reply.expect_problem(409);
    assert_eq!(problem["type"], "urn:toolhost:problem:outcome-unknown");
    assert_eq!(problem["retryable"], false);
    assert_eq!(problem["code"], "outcome_unknown");
    assert!(reply.header("retry-after").is_none(), "{problem}");
    let prompt = problem["prompt"].as_str().unwrap_or_default();
    assert!(
        prompt.contains("do not call it again until you have checked"),
        "{problem}"
    );
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("may already have acted"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_temporary_failure_is_503_with_retry_after() {
    let server = failing_server().await;
    let reply = server.invoke("/nact/tools/busy_tool", &[]).await;
    let problem = reply.expect_problem(503);
    assert_eq!(problem["retryable"], true);
    assert_eq!(problem["type"], "urn:toolhost:problem:tool-unavailable");
    assert_eq!(
        reply.header("retry-after"),
        Some("2"),
        "the tool's own hint, in seconds"
    );
    assert!(
        problem["detail"].as_str().unwrap_or_default().contains("busy"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_temporary_failure_without_a_hint_still_sends_retry_after() {
    let server = failing_server().await;
    let reply = server.invoke("/nact/tools/flaky_tool", &[]).await;
    reply.expect_problem(503);
    let after: u64 = reply
        .header("retry-after")
        .expect("Retry-After on every 503")
        .parse()
        .expect("delay-seconds");
    assert!(after >= 1, "{after}");
}

#[tokio::test]
async fn a_backend_timeout_is_504() {
    let server = failing_server().await;
    let started = Instant::now();
    let reply = server.invoke("/nact/tools/slow_tool", &[("text", json!("hi"))]).await;
    let problem = reply.expect_problem(504);
    assert!(
        started.elapsed() < Duration::from_millis(450),
        "answered at the 50 ms timeout, not after the 500 ms delay"
    );
    assert_eq!(problem["type"], "urn:toolhost:problem:tool-timeout");
    assert_eq!(problem["retryable"], true);
    assert!(
        problem["detail"].as_str().unwrap_or_default().contains("50 ms"),
        "{problem}"
    );
}

#[tokio::test]
async fn a_misshapen_result_is_502_and_does_not_leak_details() {
    let server = failing_server().await;
    let reply = server.invoke("/nact/tools/misshapen_tool", &[]).await;
    let problem = reply.expect_problem(502);
    assert_eq!(problem["retryable"], false);
    // What the backend returned and how it failed the check belong in the log, not the answer.
    for secret in [
        "unexpected",
        "additionalProperties",
        "required",
        "schema",
        "developer",
        "see the server log",
        "wrong_shape",
    ] {
        assert!(
            !reply.text.contains(secret),
            "the problem mentions `{secret}`: {}",
            reply.text
        );
    }
    assert!(problem.get("errors").is_none());
}

#[tokio::test]
async fn failures_of_a_pinned_version_look_the_same() {
    let server = failing_server().await;
    server
        .invoke("/nact/tools/busy_tool/versions/1", &[])
        .await
        .expect_problem(503);
    server
        .invoke("/nact/tools/slow_tool/versions/1", &[("text", json!("hi"))])
        .await
        .expect_problem(504);
    server
        .invoke("/nact/tools/misshapen_tool/versions/1", &[])
        .await
        .expect_problem(502);
}
