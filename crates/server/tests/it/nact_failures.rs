//! Tools that ran and failed: 502 permanent, 503 temporary with `Retry-After`, 504 timeout
//! (PROTOCOLS.md §3; N-ACT §7 "5xx for temporary failures").

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Spawn, failures, with_failing_functions};

async fn failing_server() -> crate::support::Server {
    with_failing_functions(Spawn::bundled().with_sources(vec![failures()]))
        .start()
        .await
}

#[tokio::test]
async fn division_by_zero_is_502_not_retryable_with_a_prompt() {
    let server = Spawn::bundled().start().await;
    let reply = server
        .invoke(
            "/nact/tools/divide_numbers",
            &[("dividend", json!(1)), ("divisor", json!(0))],
        )
        .await;
    let problem = reply.expect_problem(502);
    assert_eq!(problem["retryable"], false);
    assert_eq!(problem["type"], "urn:toolhost:problem:tool-failed");
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
