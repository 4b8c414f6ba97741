//! Issue #38.5 against the binary: the model hears why the API refused. An imported operation
//! (with the overlay's `json` input and per-status `errors:`) against a GitHub-shaped upstream
//! on 127.0.0.1: its 422 names the bad label on N-ACT (problem `detail`), OTC (`message`), WoA
//! (problem `detail`) and MCP (the `isError` text), without the server's token although the
//! upstream echoes it; a 500's body reaches no caller (only the log); JSON text that does not
//! parse is an input error naming the input, and nothing is sent; a toolhost federating this one
//! passes the reason on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::post;
use serde_json::{Value, json};

use crate::federation_hostile::on_every_protocol;
use crate::support::{Scratch, Server, run};

const TOKEN: &str = "ghp_refusal-token-Qw29Lm";
const SENTENCE: &str = "label nope does not exist";

/// One operation of GitHub's REST description (its `labels` optional, so the overlay's `json`
/// takes it as JSON text).
const SPEC: &str = r#"
openapi: 3.0.3
info: { title: Hub, version: 1.0.0 }
components:
  securitySchemes:
    token: { type: http, scheme: bearer }
security: [{ token: [] }]
paths:
  /repos/{owner}/{repo}/issues/{issue_number}/labels:
    post:
      operationId: issues_add_labels
      summary: Add labels to an issue.
      parameters:
        - { name: owner, in: path, required: true, schema: { type: string } }
        - { name: repo, in: path, required: true, schema: { type: string } }
        - { name: issue_number, in: path, required: true, schema: { type: integer } }
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                labels: { type: array, items: { type: string }, description: The labels to add. }
      responses:
        "200":
          description: The issue's labels.
          content:
            application/json:
              schema: { type: array, items: { type: object, properties: { name: { type: string } } } }
"#;

const OVERLAY: &str = r#"
tools:
  issues_add_labels:
    json: [labels]
    errors:
      "404": { message: "there is no such issue; list the repository's issues first" }
"#;

/// GitHub as it refuses: issue 1 answers 422 naming the bad label (and echoes the token it was
/// sent, as a careless API does), issue 2 fails with a stack trace (500), issue 3 is missing
/// (404). Counts the requests.
async fn hub(hits: Arc<AtomicUsize>) -> String {
    let router = Router::new().route(
        "/repos/{owner}/{repo}/issues/{number}/labels",
        post(
            move |Path((_, _, number)): Path<(String, String, u32)>, headers: HeaderMap| {
                let hits = Arc::clone(&hits);
                async move {
                    hits.fetch_add(1, Ordering::SeqCst);
                    let auth = headers
                        .get(header::AUTHORIZATION)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let (status, body) = match number {
                        1 => (
                            StatusCode::UNPROCESSABLE_ENTITY,
                            json!({
                                "message": "Validation Failed",
                                "errors": [
                                    {"resource": "Label", "code": "invalid", "field": "name", "message": SENTENCE},
                                    {"message": format!("request authorized with {auth}")}
                                ],
                                "documentation_url": "https://docs.github.com/rest/issues/labels"
                            }),
                        ),
                        2 => (
                            StatusCode::INTERNAL_SERVER_ERROR,
                            json!({"message": format!("Traceback at db.internal:5432 ({auth})")}),
                        ),
                        _ => (StatusCode::NOT_FOUND, json!({"message": "Not Found"})),
                    };
                    (status, axum::Json(body))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

/// The spec imported with the overlay against `base`, served with the token as a secret.
fn imported_and_served(dir: &Scratch, base: &str) -> Server {
    let spec = dir.write("hub.yaml", SPEC);
    let overlay = dir.write("overlay.yaml", OVERLAY);
    let out = dir.0.join("catalog");
    let imported = run(&[
        "import",
        "openapi",
        spec.to_str().unwrap(),
        "--base-url",
        base,
        "--overlay",
        overlay.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&imported.stderr).into_owned();
    assert!(imported.status.success(), "{said}");
    assert!(said.contains("HUB_TOKEN"), "the token to configure: {said}");
    let config = dir.write(
        "toolhost.toml",
        "[secrets]\nHUB_TOKEN = { env = \"REFUSAL_HUB_TOKEN\" }\n",
    );
    Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[("REFUSAL_HUB_TOKEN", TOKEN)],
        None,
    )
}

/// Each protocol's answer to a call of `issues_add_labels` on `issue`: (protocol, HTTP status
/// or 200 for MCP, the text a caller reads: problem `detail`, OTC `error.message`, MCP's
/// `isError` text) and the whole answer.
async fn add_labels(base: &str, issue: u32, labels: &str) -> Vec<(String, u16, String, String)> {
    let input = json!({"owner": "octo", "repo": "hello", "issue_number": issue, "labels": labels});
    let mut out = Vec::new();
    for (protocol, answer) in on_every_protocol(base, ("Hub", "issues_add_labels"), input, None).await {
        let (status, body) = match protocol.as_str() {
            "MCP" => (200, answer.clone()),
            // "422 Unprocessable Entity {...}"
            _ => (
                answer[..3].parse().unwrap(),
                answer[answer.find('{').unwrap_or(0)..].to_owned(),
            ),
        };
        let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let read = match protocol.as_str() {
            "OTC" => value["result"]["error"]["message"].as_str(),
            "MCP" => value["result"]["content"][0]["text"].as_str(),
            _ => value["detail"].as_str(),
        }
        .unwrap_or_default()
        .to_owned();
        out.push((protocol, status, read, answer));
    }
    out
}

#[tokio::test]
async fn an_apis_refusal_reaches_the_model_on_every_protocol_without_the_servers_token() {
    let hits = Arc::new(AtomicUsize::new(0));
    let base = hub(Arc::clone(&hits)).await;
    let dir = Scratch::new();
    let server = imported_and_served(&dir, &base);

    for (protocol, status, read, answer) in add_labels(&server.base, 1, r#"["nope"]"#).await {
        let expected = if protocol == "OTC" || protocol == "MCP" {
            200
        } else {
            422
        };
        assert_eq!(status, expected, "{protocol}: {answer}");
        assert!(
            read.contains(&format!(
                "the upstream service refused the request (HTTP 422); the API said: \"Validation Failed: {SENTENCE}; request authorized with Bearer <redacted>\""
            )),
            "{protocol} reads: {read}\n{answer}"
        );
        assert!(
            !answer.contains(TOKEN) && !answer.contains("Qw29Lm"),
            "{protocol}: {answer}"
        );
        if protocol == "MCP" {
            assert!(answer.contains("\"isError\":true"), "{answer}");
        }
    }
    assert_eq!(hits.swap(0, Ordering::SeqCst), 4, "one refused request per protocol");

    // A 500's body is the API's internals: no caller reads it, the operator's log does.
    for (protocol, _, read, answer) in add_labels(&server.base, 2, r#"["x"]"#).await {
        assert!(
            read.contains("the upstream service failed (HTTP 500)"),
            "{protocol}: {read}"
        );
        assert!(
            !answer.contains("db.internal") && !answer.contains("Traceback"),
            "{protocol}: {answer}"
        );
    }
    let logs = server.logs_when(|l| l.iter().any(|x| x.contains("db.internal")));
    assert!(
        logs.iter().any(|l| l.contains("db.internal")),
        "the log has the 500's body"
    );
    assert!(!logs.iter().any(|l| l.contains(TOKEN)), "never the token");

    // The overlay's wording replaces the API's for its status.
    for (protocol, _, read, _) in add_labels(&server.base, 3, r#"["x"]"#).await {
        assert!(
            read.contains("there is no such issue; list the repository's issues first") && !read.contains("Not Found"),
            "{protocol}: {read}"
        );
    }
    hits.store(0, Ordering::SeqCst);

    // JSON text that does not parse: an input error naming the input, before anything is sent.
    for (protocol, status, _, answer) in add_labels(&server.base, 1, "[nope").await {
        let value: Value = serde_json::from_str(&answer[answer.find('{').unwrap_or(0)..]).unwrap_or_default();
        match protocol.as_str() {
            "N-ACT" | "WoA" => {
                assert_eq!(status, 422, "{protocol}: {answer}");
                let said = value["errors"]["labels"].as_str().unwrap_or_default();
                assert!(said.starts_with("`labels` expects JSON text"), "{protocol}: {answer}");
            }
            "OTC" => {
                assert_eq!(status, 422, "{answer}");
                let said = value["parameter_errors"]["labels"].as_str().unwrap_or_default();
                assert!(said.starts_with("`labels` expects JSON text"), "{answer}");
            }
            _ => {
                let text = value["result"]["content"][0]["text"].as_str().unwrap_or_default();
                assert!(
                    text.contains("Invalid arguments") && text.contains("`labels` expects JSON text"),
                    "{answer}"
                );
            }
        }
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent");
    assert!(server.terminate());
}

#[tokio::test]
async fn a_federating_toolhost_passes_the_apis_reason_on() {
    let hits = Arc::new(AtomicUsize::new(0));
    let base = hub(Arc::clone(&hits)).await;
    let dir = Scratch::new();
    let far = imported_and_served(&dir, &base);
    let out = dir.0.join("near");
    let said = crate::federation::import(&format!("{}/nact", far.base), &out, &["--toolkit", "Hub"], &[]);
    assert!(said.contains("wrote 1 tools"), "{said}");
    let near = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);

    let answers = add_labels(&near.base, 1, r#"["nope"]"#).await;
    for (protocol, _, read, answer) in &answers {
        assert!(
            read.contains(SENTENCE) && read.contains("the API said"),
            "{protocol}: {read}\n{answer}"
        );
        assert!(!answer.contains(TOKEN), "{protocol}: {answer}");
    }
    // The far toolhost refuses the JSON text (the near one cannot know it is JSON): the near
    // one says why, naming the input.
    for (protocol, _, read, answer) in add_labels(&near.base, 1, "[nope").await {
        assert!(
            read.contains("refused the call; it said: \"`labels` expects JSON text"),
            "{protocol}: {read}\n{answer}"
        );
    }
    assert!(near.terminate());
    assert!(far.terminate());
}
