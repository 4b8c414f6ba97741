//! Issue #13: `toolhost import openapi` writes a catalog that `check` accepts and `serve` serves
//! as it is, and its tools call the API it describes (here a local stand-in on 127.0.0.1).

use std::sync::{Arc, Mutex};

use axum::extract::Path;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::support::{Scratch, Server, run};

const PETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openapi/pets.yaml");
const PETS_V2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openapi/pets-v2.yaml");
const SWAGGER_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openapi/swagger");

/// The pet shop the document describes: it wants its API key and records what it got.
pub async fn pet_shop(seen: Arc<Mutex<Vec<String>>>) -> String {
    let (get_seen, list_seen, post_seen) = (Arc::clone(&seen), Arc::clone(&seen), seen);
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
                    let trace = headers
                        .get("x-trace")
                        .and_then(|v| v.to_str().ok())
                        .map(|t| format!(" trace={t}"))
                        .unwrap_or_default();
                    seen.lock().unwrap().push(format!("GET {id} key={key}{trace}"));
                    axum::Json(json!({"id": id, "name": "Rex", "status": "available", "tags": ["good"]}))
                }
            }),
        )
        .route(
            "/v1/pets",
            axum::routing::get({
                let seen = Arc::clone(&list_seen);
                move |axum::extract::RawQuery(query): axum::extract::RawQuery| {
                    let seen = Arc::clone(&seen);
                    async move {
                        seen.lock().unwrap().push(format!("LIST {}", query.unwrap_or_default()));
                        axum::Json(json!([{"id": 1, "name": "Tom"}, {"id": 2, "name": "Kit"}]))
                    }
                }
            })
            .post(move |axum::Json(body): axum::Json<Value>| {
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

/// Serves the imported catalog `out` with its API key secret `name` set to `key`.
fn serve_with_key(dir: &Scratch, out: &std::path::Path, name: &str, key: &str) -> Server {
    let config = dir.write(
        "toolhost.toml",
        &format!("[secrets]\n{name} = {{ env = \"IMPORT_TEST_KEY\" }}\n"),
    );
    Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[("IMPORT_TEST_KEY", key)],
        None,
    )
}

/// The N-ACT output parameters of a call, by name.
pub fn outputs_of(reply: &Value) -> std::collections::BTreeMap<String, Value> {
    reply["output_parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("no outputs: {reply}"))
        .iter()
        .map(|o| (o["name"].as_str().unwrap_or_default().to_owned(), o["value"].clone()))
        .collect()
}

/// An N-ACT call of `tool` with `pairs`; the status and the body.
pub async fn invoke(base: &str, tool: &str, pairs: Value) -> (u16, Value) {
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
    // Nothing left out (#38.4): the optional object and the cookie are taken whole.
    assert!(
        !stderr.contains("left out") && !stderr.contains("skipped"),
        "nothing left out: {stderr}"
    );
    let yaml = std::fs::read_to_string(out.join("pet_shop.yaml")).unwrap();
    assert!(
        yaml.contains(r#""cookies":{"session":"{{input.session}}"}"#) && yaml.contains(r#""owner":"{{input.owner}}""#),
        "{yaml}"
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
    let server = serve_with_key(&dir, &out, "PET_SHOP_API_KEY", "k-1234567");
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
        json!([{"name": "name", "value": "Tom"}, {"name": "status", "value": "PENDING"}]),
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
    assert_eq!(seen[0], "GET 42 key=k-1234567");
    // The model's `PENDING` reaches the API as its own `pending` (issue #32.2).
    assert!(
        seen[1].contains("\"name\":\"Tom\"") && seen[1].contains("\"status\":\"pending\""),
        "{seen:?}"
    );
    assert!(server.terminate());
}

#[test]
fn documents_that_are_not_api_descriptions_say_what_is_wrong() {
    let dir = Scratch::new();
    let swagger = dir.write(
        "swagger.json",
        r#"{"swagger": "1.2", "info": {"title": "x"}, "paths": {}}"#,
    );
    let out = run(&[
        "import",
        "openapi",
        swagger.to_str().unwrap(),
        "--out",
        dir.0.join("c").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only Swagger 2.0 and OpenAPI 3.0/3.1"));
    let broken = dir.write("broken.yaml", "openapi: [");
    let out = run(&["import", "openapi", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.yaml"));
}

/// The overlay of the README's walkthrough: rename, fix, take JSON, trim, skip and combine.
const OVERLAY: &str = r#"
toolkit: Pets
tools:
  get_pet_by_id:
    name: pet
    description: Look up one pet by its id.
    rename: { pet_id: id }
    set: { x_trace: toolhost }
    outputs: [name, status]
  add_pet:
    json: [owner]
    annotations: { idempotent: false, destructive: false }
  find_pets_by_status: { skip: true }
combine:
  pet_and_peers:
    description: A pet, and the other pets with its status.
    steps: [get_pet_by_id, find_pets_by_status]
    set: { find_pets_by_status.status: "{{get_pet_by_id.body.status}}" }
    keep: [pet_id]
    outputs: { name: get_pet_by_id.body.name, peers: { path: find_pets_by_status.body, description: The pets with the same status. } }
"#;

#[tokio::test]
async fn an_overlay_sculpts_the_imported_tools_and_combines_operations() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = pet_shop(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    let overlay = dir.write("overlay.yaml", OVERLAY);
    let out = dir.0.join("catalog");
    let imported = run(&[
        "import",
        "openapi",
        PETS,
        "--base-url",
        &base,
        "--overlay",
        overlay.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&imported.stderr);
    assert!(imported.status.success(), "{stderr}");
    let yaml = std::fs::read_to_string(out.join("pets.yaml")).unwrap();
    assert!(
        yaml.contains("name: pet\n") && yaml.contains("# combines get_pet_by_id, find_pets_by_status"),
        "{yaml}"
    );
    assert!(!yaml.contains("name: find_pets_by_status"), "skipped: {yaml}");
    // A GET is read-only and idempotent; the overlay says what a POST is.
    assert!(
        yaml.contains("annotations: {\"idempotent\":true,\"read_only\":true}")
            && yaml.contains("annotations: {\"destructive\":false,\"idempotent\":false}"),
        "{yaml}"
    );
    let check = run(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));

    let server = serve_with_key(&dir, &out, "PETS_API_KEY", "k-1000001");
    let (status, pet) = invoke(&server.base, "pet", json!([{"name": "id", "value": 42}])).await;
    assert_eq!(status, 200, "{pet}");
    let values = outputs_of(&pet);
    assert_eq!(values.keys().collect::<Vec<_>>(), ["name", "status"], "trimmed: {pet}");
    assert_eq!(values["name"], json!("Rex"));
    let (status, refused) = invoke(
        &server.base,
        "pet",
        json!([{"name": "x_trace", "value": "a"}, {"name": "id", "value": 1}]),
    )
    .await;
    assert_eq!(status, 422, "a fixed input is not the model's: {refused}");

    let (status, added) = invoke(
        &server.base,
        "add_pet",
        json!([{"name": "name", "value": "Tom"}, {"name": "owner", "value": "{\"id\": 5}"}]),
    )
    .await;
    assert_eq!(status, 200, "{added}");

    let (status, both) = invoke(&server.base, "pet_and_peers", json!([{"name": "pet_id", "value": 7}])).await;
    assert_eq!(status, 200, "{both}");
    let values = outputs_of(&both);
    assert_eq!(values["name"], json!("Rex"));
    assert_eq!(values["peers"][1]["name"], json!("Kit"), "{both}");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], "GET 42 key=k-1000001 trace=toolhost", "{seen:?}");
    assert!(
        seen[1].contains("\"owner\":{\"id\":5}"),
        "the JSON text is sent as JSON: {seen:?}"
    );
    // The combined tool: the pet, then the pets with its status (`x_trace` not kept: not sent).
    assert_eq!(seen[2..], ["GET 7 key=k-1000001", "LIST status=available"], "{seen:?}");
    assert!(server.terminate());

    // Mistakes in the overlay name the tool and what it has.
    let bad = dir.write("bad.yaml", "tools:\n  add_pet:\n    keep: [nme]\n");
    let refused = run(&[
        "import",
        "openapi",
        PETS,
        "--overlay",
        bad.to_str().unwrap(),
        "--out",
        dir.0.join("x").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("tool `add_pet`: `keep` names nme") && stderr.contains("it has: name, owner, status"),
        "{stderr}"
    );
    let bad = dir.write("bad2.yaml", "tools:\n  add_pet:\n    kep: [name]\n");
    let refused = run(&["import", "openapi", PETS, "--overlay", bad.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("kep"),
        "unknown keys are refused"
    );
}

#[test]
fn a_re_import_keeps_every_version_and_adds_changes_by_the_compatibility_rules() {
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let out_text = out.to_str().unwrap();
    assert!(run(&["import", "openapi", PETS, "--out", out_text]).status.success());
    let lock = run(&["check", "--lock", out_text]);
    assert!(lock.status.success(), "{}", String::from_utf8_lossy(&lock.stderr));

    let again = run(&["import", "openapi", PETS_V2, "--out", out_text]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "`find_pets_by_status`: a compatible change (adds optional input `offset`), published as version 1.1.0"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("`get_pet_by_id`: the new signature would break its callers")
            && stderr.contains("new tool `get_pet_by_id_v2`"),
        "{stderr}"
    );
    assert!(stderr.contains("`delete_pet`: new tool"), "{stderr}");
    assert!(
        !stderr.contains("`add_pet`"),
        "unchanged tools are not reported: {stderr}"
    );
    // The locked versions are untouched: the merged catalog passes the lock.
    let check = run(&["check", out_text]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let yaml = std::fs::read_to_string(out.join("pet_shop.yaml")).unwrap();
    assert!(
        yaml.contains("- version: 1.1.0") && yaml.contains("name: get_pet_by_id_v2"),
        "{yaml}"
    );

    // The same description again changes nothing, and the breaking change is not made twice.
    let third = run(&["import", "openapi", PETS_V2, "--out", out_text]);
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(stderr.contains("no tool changed"), "{stderr}");
    assert_eq!(std::fs::read_to_string(out.join("pet_shop.yaml")).unwrap(), yaml);

    // A file the command did not write is not merged into.
    let other = dir.0.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("pet_shop.yaml"),
        "toolkits:\n  - name: Mine\n    tools: []\n",
    )
    .unwrap();
    let refused = run(&["import", "openapi", PETS, "--out", other.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("holds toolkit `Mine`"));
}

/// Serves the Swagger fixtures' directory over HTTP on 127.0.0.1.
async fn serve_fixtures() -> String {
    let app = axum::Router::new().route(
        "/specs/{file}",
        axum::routing::get(|Path(file): Path<String>| async move {
            match std::fs::read_to_string(format!("{SWAGGER_DIR}/{file}")) {
                Ok(text) => (axum::http::StatusCode::OK, text),
                Err(_) => (axum::http::StatusCode::NOT_FOUND, "no such file".to_owned()),
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/specs", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test]
async fn swagger_2_from_a_url_with_a_relative_ref_imports() {
    let specs = serve_fixtures().await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let url = format!("{specs}/store.yaml");
    let (url2, out2) = (url.clone(), out.clone());
    let refused =
        tokio::task::spawn_blocking(move || run(&["import", "openapi", &url2, "--out", out2.to_str().unwrap()]))
            .await
            .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("--allow-private"),
        "{stderr}"
    );

    let (url2, out2) = (url.clone(), out.clone());
    let imported = tokio::task::spawn_blocking(move || {
        run(&[
            "import",
            "openapi",
            &url2,
            "--allow-private",
            "--out",
            out2.to_str().unwrap(),
        ])
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&imported.stderr);
    assert!(imported.status.success(), "{stderr}");
    assert!(
        stderr.contains("ORDER_DESK_PASSWORD, ORDER_DESK_USERNAME"),
        "basic auth: {stderr}"
    );
    let yaml = std::fs::read_to_string(out.join("order_desk.yaml")).unwrap();
    for expected in [
        "\"base_url\":\"https://orders.example.com/api\"",
        // The body's properties from the other file, readOnly `id` not an input.
        "{\"description\":\"What is ordered.\",\"max_length\":40,\"name\":\"item\",\"type\":\"string\"}",
        // The shared path parameter, typed.
        "{\"description\":\"The orderId.\",\"max\":9007199254740991,\"min\":1,\"name\":\"order_id\",\"type\":\"int\"}",
        // Form parameters as a form body.
        "\"form\":{\"note\":\"{{input.note}}\",\"status\":\"{{input.status}}\"}",
    ] {
        assert!(yaml.contains(expected), "{expected} in {yaml}");
    }
    assert!(
        !yaml.contains("\"name\":\"id\",\"type\""),
        "readOnly is not an input: {yaml}"
    );
    let check = run(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));

    let missing = format!("{specs}/nothing.yaml");
    let failed = tokio::task::spawn_blocking(move || run(&["import", "openapi", &missing, "--allow-private"]))
        .await
        .unwrap();
    assert!(
        String::from_utf8_lossy(&failed.stderr).contains("404"),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
}
