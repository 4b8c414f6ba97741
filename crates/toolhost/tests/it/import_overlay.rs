//! Issue #32 (items 1, 5): the overlay rewords inputs and sets `auth` and `headers` on the
//! toolkit or a tool; a re-import never loses what the file says by hand or what an overlay
//! set; an API that wants a user's own OAuth token is imported with a road to one.

use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use serde_json::json;

use crate::import::{invoke, outputs_of, pet_shop};
use crate::support::{Scratch, Server, run};

const PETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openapi/pets.yaml");

/// `toolhost import openapi SPEC --base-url BASE --out OUT ARGS`; its stderr (it must succeed).
#[track_caller]
fn import(spec: &str, base: &str, out: &std::path::Path, args: &[&str]) -> String {
    let mut all = vec![
        "import",
        "openapi",
        spec,
        "--base-url",
        base,
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let output = run(&all);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

/// Serves `out` with `[secrets]` `NAME = env VALUE`, one per pair.
fn serve(dir: &Scratch, out: &std::path::Path, secrets: &[(&str, &str)]) -> Server {
    let mut toml = "[secrets]\n".to_owned();
    let envs: Vec<(String, String)> = secrets
        .iter()
        .map(|(name, value)| {
            toml.push_str(&format!("{name} = {{ env = \"OVERLAY_TEST_{name}\" }}\n"));
            (format!("OVERLAY_TEST_{name}"), (*value).to_owned())
        })
        .collect();
    let config = dir.write("toolhost.toml", &toml);
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &envs,
        None,
    )
}

const OVERLAY: &str = r#"
auth: { api_key: { header: X-Api-Key, value: "{{secret.SHOP_KEY}}" } }
tools:
  get_pet_by_id:
    describe: { pet_id: "The number on the pet's collar." }
    headers: { X-Trace: from-overlay }
"#;

#[tokio::test]
async fn the_overlay_rewords_inputs_and_sets_auth_and_headers() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = pet_shop(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let overlay = dir.write("overlay.yaml", OVERLAY);
    let said = import(PETS, &base, &out, &["--overlay", overlay.to_str().unwrap()]);
    // The secret the overlay reads is the one to configure; the document's is not read any more.
    assert!(said.contains("[secrets]: SHOP_KEY\n"), "{said}");
    // `serve` refuses the catalog without them: the next commands take the config.
    assert!(
        said.contains("next: toolhost check --lock --config ") && said.contains("toolhost.toml "),
        "{said}"
    );
    let yaml = std::fs::read_to_string(out.join("pet_shop.yaml")).unwrap();
    assert!(
        yaml.contains(r#"{"description":"The number on the pet's collar.","max":9007199254740991,"min":1,"name":"pet_id","type":"int"}"#),
        "{yaml}"
    );
    assert!(!yaml.contains("PET_SHOP_API_KEY"), "{yaml}");

    let server = serve(&dir, &out, &[("SHOP_KEY", "k-1234567")]);
    let (status, pet) = invoke(&server.base, "get_pet_by_id", json!([{"name": "pet_id", "value": 3}])).await;
    assert_eq!(status, 200, "{pet}");
    assert_eq!(outputs_of(&pet)["name"], json!("Rex"));
    assert!(server.terminate());
    assert_eq!(
        seen.lock().unwrap().clone(),
        ["GET 3 key=k-1234567 trace=from-overlay"],
        "the overlay's auth and header were sent"
    );
    let check = run(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}

#[tokio::test]
async fn a_re_import_with_an_overlay_keeps_what_the_file_says_by_hand() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let base = pet_shop(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    let overlay = dir.write(
        "overlay.yaml",
        "tools:\n  get_pet_by_id:\n    describe: { pet_id: The pet's number. }\n",
    );
    let overlay = overlay.to_str().unwrap();
    import(PETS, &base, &out, &["--overlay", overlay]);
    let file = out.join("pet_shop.yaml");
    // By hand: the toolkit's key comes from another secret, and one version gets retries.
    let yaml = std::fs::read_to_string(&file).unwrap();
    let edited = yaml
        .replace("{{secret.PET_SHOP_API_KEY}}", "{{secret.HAND_KEY}}")
        .replace(
            r#"backend: {"kind":"http","outputs":{"id":"call.body.id","name":"call.body.name","status":"call.body.status","tags":"call.body.tags"},"steps":[{"cookies""#,
            r#"backend: {"kind":"http","retries":0,"outputs":{"id":"call.body.id","name":"call.body.name","status":"call.body.status","tags":"call.body.tags"},"steps":[{"cookies""#,
        );
    assert_ne!(edited, yaml);
    std::fs::write(&file, &edited).unwrap();

    let said = import(PETS, &base, &out, &["--overlay", overlay]);
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert!(
        yaml.contains("{{secret.HAND_KEY}}") && !yaml.contains("PET_SHOP_API_KEY"),
        "the hand edit is kept: {yaml}"
    );
    assert!(yaml.contains(r#""retries":0"#), "{yaml}");
    assert!(
        said.contains("the toolkit's `auth` is kept as the file has it") && said.contains("HAND_KEY"),
        "the difference is said: {said}"
    );
    assert!(said.contains("[secrets]: HAND_KEY\n"), "{said}");
    let check = run(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));

    let server = serve(&dir, &out, &[("HAND_KEY", "k-2345678")]);
    let (status, pet) = invoke(&server.base, "get_pet_by_id", json!([{"name": "pet_id", "value": 5}])).await;
    assert_eq!(status, 200, "{pet}");
    assert!(server.terminate());
    assert_eq!(seen.lock().unwrap().clone(), ["GET 5 key=k-2345678"]);

    // What the overlay says is the operator's choice: it writes over the file's.
    let overlay = dir.write(
        "overlay2.yaml",
        "auth: { api_key: { header: X-Api-Key, value: \"{{secret.OVERLAY_KEY}}\" } }\n",
    );
    let said = import(PETS, &base, &out, &["--overlay", overlay.to_str().unwrap()]);
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert!(
        yaml.contains("{{secret.OVERLAY_KEY}}") && !yaml.contains("HAND_KEY"),
        "{yaml}"
    );
    assert!(!said.contains("is kept as the file has it"), "{said}");
}

/// A music API that takes only a user's own OAuth token (authorization code flow), as
/// Spotify's does.
const USER_TOKEN_API: &str = r#"{
  "openapi": "3.0.3",
  "info": {"title": "Tunes", "version": "1"},
  "servers": [{"url": "https://tunes.example.com/v1"}],
  "security": [{"oauth": ["user-read-private"]}],
  "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"authorizationCode": {
    "authorizationUrl": "https://tunes.example.com/authorize", "tokenUrl": "https://tunes.example.com/token",
    "scopes": {"user-read-private": "Read your profile"}}}}}},
  "paths": {"/me": {"get": {"operationId": "getMe", "summary": "The user's profile.",
    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
      "type": "object", "properties": {"name": {"type": "string", "description": "The user's name."}}}}}}}}}}
}"#;

/// The API: `/v1/me` answers only `Bearer user-token`.
async fn tunes() -> String {
    let app = axum::Router::new().route(
        "/v1/me",
        axum::routing::get(|headers: HeaderMap| async move {
            match headers.get("authorization").and_then(|v| v.to_str().ok()) {
                Some("Bearer user-token") => (axum::http::StatusCode::OK, axum::Json(json!({"name": "Ada"}))),
                _ => (
                    axum::http::StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"error": "no token"})),
                ),
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test]
async fn an_api_taking_a_users_oauth_token_is_called_with_one() {
    let base = tunes().await;
    let dir = Scratch::new();
    let spec = dir.write("tunes.json", USER_TOKEN_API);
    let out = dir.0.join("catalog");
    let said = import(spec.to_str().unwrap(), &base, &out, &[]);
    // The roads are said: a token the server holds, or the caller's own, forwarded or exchanged.
    assert!(
        said.contains("the server secret `TUNES_TOKEN` as the bearer token")
            && said.contains("auth: {forward: bearer}")
            && said.contains("auth: {exchange:"),
        "{said}"
    );
    assert!(!said.contains("without credentials"), "{said}");
    let server = serve(&dir, &out, &[("TUNES_TOKEN", "user-token")]);
    let (status, me) = invoke(&server.base, "get_me", json!([])).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(outputs_of(&me)["name"], json!("Ada"));
    assert!(server.terminate());

    // The overlay takes the other road: the caller's own token, forwarded.
    let overlay = dir.write("overlay.yaml", "auth: { forward: bearer }\n");
    let forwarded = dir.0.join("forwarded");
    let said = import(
        spec.to_str().unwrap(),
        &base,
        &forwarded,
        &["--overlay", overlay.to_str().unwrap()],
    );
    assert!(
        !said.contains("[secrets]") && !said.contains("--config"),
        "no secret is read: {said}"
    );
    let yaml = std::fs::read_to_string(forwarded.join("tunes.yaml")).unwrap();
    assert!(yaml.contains(r#""auth":{"forward":"bearer"}"#), "{yaml}");
    // Forwarding is token passthrough unless the operator says the API shares this server's
    // audience (issue #30.10): `check` refuses it until the file says so.
    let check = run(&["check", forwarded.to_str().unwrap()]);
    assert!(!check.status.success());
    assert!(String::from_utf8_lossy(&check.stderr).contains("same_audience: true"));
    std::fs::write(
        forwarded.join("tunes.yaml"),
        yaml.replace(
            r#""auth":{"forward":"bearer"}"#,
            r#""auth":{"forward":"bearer"},"same_audience":true"#,
        ),
    )
    .unwrap();
    let check = run(&["check", forwarded.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}
