//! Issue #13: `toolhost import openapi` writes a catalog that `check` accepts and `serve` serves
//! as it is, and its tools call the API it describes (here a local stand-in on 127.0.0.1).

use std::sync::{Arc, Mutex};

use axum::extract::Path;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::support::{Scratch, Server, run};

const PETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openapi/pets.yaml");

/// The pet shop the document describes: it wants its API key and records what it got.
async fn pet_shop(seen: Arc<Mutex<Vec<String>>>) -> String {
    let (get_seen, post_seen) = (Arc::clone(&seen), seen);
    let app = axum::Router::new()
        .route(
            "/v1/pets/{id}",
            axum::routing::get(move |Path(id): Path<u64>, headers: HeaderMap| {
                let seen = Arc::clone(&get_seen);
                async move {
                    let key = headers
                        .get("x-api-key")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    seen.lock().unwrap().push(format!("GET {id} key={key}"));
                    axum::Json(json!({"id": id, "name": "Rex", "status": "available", "tags": ["good"]}))
                }
            }),
        )
        .route(
            "/v1/pets",
            axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
                let seen = Arc::clone(&post_seen);
                async move {
                    seen.lock().unwrap().push(format!("POST {body}"));
                    (
                        axum::http::StatusCode::CREATED,
                        axum::Json(json!({"id": 7, "name": body["name"], "status": "pending"})),
                    )
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// `toolhost import openapi PETS --base-url BASE --out OUT`.
fn import_to(base: &str, out: &std::path::Path) -> std::process::Output {
    run(&[
        "import",
        "openapi",
        PETS,
        "--base-url",
        base,
        "--out",
        out.to_str().unwrap(),
    ])
}

/// An N-ACT call of `tool` with `pairs`; the status and the body.
async fn invoke(base: &str, tool: &str, pairs: Value) -> (u16, Value) {
    let reply = reqwest::Client::new()
        .post(format!("{base}/nact/tools/{tool}:invoke"))
        .json(&json!({ "input_parameters": pairs }))
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_imported_openapi_document_is_a_working_catalog() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = pet_shop(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let imported = run(&[
        "import",
        "openapi",
        PETS,
        "--base-url",
        &base,
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&imported.stderr);
    assert!(imported.status.success(), "{stderr}");
    assert!(
        stderr.contains("wrote 3 tools") && stderr.contains("PET_SHOP_API_KEY"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`owner` is not a scalar") && stderr.contains("cookie parameter `session`"),
        "nothing left out silently: {stderr}"
    );
    let yaml = std::fs::read_to_string(out.join("pet_shop.yaml")).unwrap();
    assert!(
        yaml.contains("# GET /pets/{petId}") && yaml.contains("name: get_pet_by_id"),
        "{yaml}"
    );
    // Deterministic: the same document gives the same file.
    let again = dir.0.join("again");
    assert!(import_to(&base, &again).status.success());
    assert_eq!(std::fs::read_to_string(again.join("pet_shop.yaml")).unwrap(), yaml);

    let check = run(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let config = dir.write(
        "toolhost.toml",
        "[secrets]\nPET_SHOP_API_KEY = { env = \"IMPORT_TEST_KEY\" }\n",
    );
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[("IMPORT_TEST_KEY", "k-123")],
        None,
    );
    let (_, pet) = invoke(&server.base, "get_pet_by_id", json!([{"name": "pet_id", "value": 42}])).await;
    let values: Vec<(&str, &Value)> = pet["output_parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("{pet}"))
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), &o["value"]))
        .collect();
    assert!(
        values.contains(&("id", &json!(42))) && values.contains(&("name", &json!("Rex"))),
        "{pet}"
    );
    let (_, added) = invoke(
        &server.base,
        "add_pet",
        json!([{"name": "name", "value": "Tom"}, {"name": "status", "value": "pending"}]),
    )
    .await;
    assert!(added.to_string().contains("\"Tom\""), "{added}");
    let (refused, _) = invoke(
        &server.base,
        "add_pet",
        json!([{"name": "name", "value": "Tom"}, {"name": "status", "value": "lost"}]),
    )
    .await;
    assert_eq!(refused, 422, "the enum is enforced before the upstream is called");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], "GET 42 key=k-123");
    assert!(
        seen[1].contains("\"name\":\"Tom\"") && seen[1].contains("\"status\":\"pending\""),
        "{seen:?}"
    );
    assert!(server.terminate());
}

#[test]
fn documents_that_are_not_openapi_3_say_what_to_do() {
    let dir = Scratch::new();
    let swagger = dir.write(
        "swagger.json",
        r#"{"swagger": "2.0", "info": {"title": "x"}, "paths": {}}"#,
    );
    let out = run(&[
        "import",
        "openapi",
        swagger.to_str().unwrap(),
        "--out",
        dir.0.join("c").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("convert it to OpenAPI 3"));
    let broken = dir.write("broken.yaml", "openapi: [");
    let out = run(&["import", "openapi", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.yaml"));
}
