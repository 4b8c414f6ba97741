//! What the client sends and accepts, as the specs say (issue #22, client items), against stub
//! servers written from the specs rather than from toolhost.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolhost_client::{Protocol, Source};

use crate::support::{Stub, client, page, serve, signature};

/// Issue #22.10 (N-ACT §7, §6.1): the invocation object names the tool, and `version` /
/// `currentVersion` are read from integers or strings, as servers written from the draft send.
#[tokio::test]
async fn nact_invocations_name_the_tool_and_versions_may_be_strings() {
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&bodies);
    let mut quoted = signature("echo", "Echo.");
    quoted["version"] = json!("1");
    quoted["currentVersion"] = json!("1");
    let listing = page(vec![quoted]);
    // Any path under /tools answers, and the path is recorded: the test checks it is the one
    // §7 draws, so a client that posts elsewhere fails here (issue #31.14).
    let app = axum::Router::new()
        .route("/nact/tools", get(move || async move { Json(listing) }))
        .route(
            "/nact/tools/{*rest}",
            post(move |uri: axum::http::Uri, Json(body): Json<Value>| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock().unwrap().push(json!({"path": uri.path(), "body": body}));
                    Json(json!({"output_parameters": [{"name": "n", "value": 4}]}))
                }
            }),
        );
    let base = serve(app).await;
    let client = client(Stub::new(&[]));
    let server = client
        .discover_as(&Source::parse(&format!("{base}/nact")).unwrap(), Some(Protocol::Nact))
        .await
        .unwrap();
    let tool = server.tool("echo").unwrap();
    assert_eq!(tool.version_number, Some(1));
    assert_eq!(client.call(tool, json!({"n": 4})).await.unwrap(), json!({"n": 4}));
    let seen = bodies.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    // `POST {platform-root}/tools/{toolID}/versions/{versionId}:invoke` (§7).
    assert_eq!(
        seen[0]["path"], "/nact/tools/echo-id/versions/1:invoke",
        "{:?}",
        seen[0]
    );
    let body = &seen[0]["body"];
    assert_eq!(body["name"], "echo", "{body:?}");
    assert_eq!(body["input_parameters"], json!([{"name": "n", "value": 4}]));
}
