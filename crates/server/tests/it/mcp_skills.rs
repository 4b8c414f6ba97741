//! MCP skills (issue #39.6, SEP-2640) and the 2026-07-28 stateless streams over real HTTP: each
//! agent a caller may use is a skill whose SKILL.md (read as a resource) has the digest, size
//! and front matter its entry promises; what a caller may not use is unknown; an agent's
//! endpoint serves its one skill. A stateless server serves `subscriptions/listen` to
//! 2026-07-28 clients and tells older clients, who have no session, of neither subscriptions
//! nor logging.

use std::time::Duration;

use serde_json::{Value, json};
use sha2::Digest as _;
use toolhost_core::Source;
use toolhost_core::catalog::Loader;

use crate::mcp_resources::{keys, source};
use crate::support::{Server, Spawn};

fn docs(text: &str) -> Source {
    source(
        "docs.yaml",
        &format!("resources:\n  - {{ uri: \"docs://style\", name: style, text: \"{text}\" }}\n"),
    )
}

fn agents() -> Vec<Source> {
    vec![
        source(
            "agents/trip_plan.md",
            "---\nname: trip_plan\ndescription: Plans a trip.\ntools: [divide_numbers, Units.convert_length@1]\nhandoffs: [secret]\n---\nUse divide_numbers() to split costs and convert_length() for distances.\n",
        ),
        source(
            "agents/secret.md",
            "---\nname: secret\ndescription: Only for admins.\ntools: [divide_numbers]\nscopes: [admin]\n---\nUse divide_numbers().\n",
        ),
    ]
}

async fn server() -> Server {
    let mut sources = agents();
    sources.push(docs("Write plainly."));
    Spawn::bundled().with_sources(sources).with_config(keys).start().await
}

/// A 2026-07-28 request (per-request `_meta`, SEP-2575) at `path` with the API key `key`.
fn modern(server: &Server, path: &str, key: &str, method: &str, mut params: Value) -> reqwest::RequestBuilder {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {key}"));
    if let Some(name) = params.get("uri").or_else(|| params.get("name")).and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    request.body(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string())
}

/// [`modern`], answered: the `result` or the `error`.
async fn rpc(server: &Server, path: &str, key: &str, method: &str, params: Value) -> Result<Value, Value> {
    let reply = modern(server, path, key, method, params).send().await.unwrap();
    let answer: Value = reply.json().await.unwrap();
    match answer.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(answer["result"].clone()),
    }
}

fn names(list: &Value) -> Vec<&str> {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn each_agent_a_caller_may_use_is_a_skill_whose_file_matches_its_entry() {
    let server = server().await;
    let discovered = rpc(&server, "/mcp", "plain-key", "server/discover", json!({}))
        .await
        .unwrap();
    assert_eq!(
        discovered["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({}),
        "{discovered}"
    );

    let list = rpc(&server, "/mcp", "plain-key", "skills/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        names(&list),
        ["trip-plan"],
        "an agent's `_` is a skill's `-`; secret is hidden"
    );
    assert_eq!(
        (&list["ttlMs"], &list["cacheScope"]),
        (&json!(60_000), &json!("private"))
    );
    let entry = &list["skills"][0];
    let uri = "skill://trip-plan/SKILL.md";
    assert_eq!(entry["uri"], uri);
    assert_eq!(entry["frontmatter"]["metadata"]["toolhost-agent"], "trip_plan");
    assert_eq!(
        entry["frontmatter"]["metadata"]["toolhost-tools"],
        "divide_numbers Units.convert_length@1"
    );

    let read = rpc(&server, "/mcp", "plain-key", "resources/read", json!({"uri": uri}))
        .await
        .unwrap();
    let file = &read["contents"][0];
    assert_eq!(file["mimeType"], "text/markdown");
    let text = file["text"].as_str().unwrap();
    let hex: String = sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let digest = format!("sha256:{hex}");
    assert_eq!(
        entry["resources"],
        json!([{"uri": uri, "digest": digest, "size": text.len()}]),
        "the entry promises the bytes resources/read gives"
    );
    assert!(
        text.starts_with("---\nname: \"trip-plan\"\ndescription: \"Plans a trip.\"\n"),
        "{text}"
    );
    assert!(
        text.contains("Use divide_numbers() to split costs"),
        "the procedure: {text}"
    );
    assert!(
        text.contains(r#"- `convert_length`: "#) && text.contains(r#"`_meta: {"toolhost/version": "1.0.0"}`"#),
        "a pinned tool says how to call its version: {text}"
    );

    let got = rpc(&server, "/mcp", "plain-key", "skills/get", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(&got["skill"], entry);
    let listed = rpc(&server, "/mcp", "plain-key", "resources/list", json!({}))
        .await
        .unwrap();
    let resource = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == uri)
        .expect("the SKILL.md is a listed resource");
    assert_eq!(
        (&resource["name"], &resource["description"]),
        (&json!("trip-plan"), &json!("Plans a trip."))
    );
}

#[tokio::test]
async fn a_skill_the_caller_may_not_use_is_unknown_and_an_agents_endpoint_serves_its_own() {
    let server = server().await;
    let secret = "skill://secret/SKILL.md";
    for (method, params) in [
        ("skills/get", json!({"uri": secret})),
        ("resources/read", json!({"uri": secret})),
    ] {
        let error = rpc(&server, "/mcp", "plain-key", method, params).await.unwrap_err();
        assert_eq!(error["code"], -32602, "{method}: {error}");
        assert_eq!(error["data"]["uri"], secret, "{method}: {error}");
    }
    let read = |key: &'static str| {
        let server = &server;
        async move {
            let uri = json!({"uri": "skill://trip-plan/SKILL.md"});
            let read = rpc(server, "/mcp", key, "resources/read", uri).await.unwrap();
            read["contents"][0]["text"].as_str().unwrap().to_owned()
        }
    };
    assert!(
        !read("plain-key").await.contains(secret),
        "a hand-over to a hidden skill is not named"
    );
    assert!(
        read("admin-key")
            .await
            .contains("## Hand-over\n\n- `secret`: skill `skill://secret/SKILL.md`."),
        "the agents it hands over to, as skills"
    );
    let admin = rpc(&server, "/mcp", "admin-key", "skills/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        names(&admin),
        ["secret", "trip-plan"],
        "in the order of the agents' names"
    );
    let own = rpc(&server, "/agents/trip_plan/mcp", "plain-key", "skills/list", json!({}))
        .await
        .unwrap();
    assert_eq!(names(&own), ["trip-plan"], "{own}");
}

/// Serves a new catalog: the bundled one, the agents and `docs.yaml` with `text`.
fn reload(server: &Server, text: &str) {
    let mut sources = toolhost_core::native::bundled_catalog();
    sources.extend(agents());
    sources.push(docs(text));
    server.engine.replace(Loader::default().load(&sources).unwrap());
}

#[tokio::test]
async fn a_stateless_server_sends_resource_updates_on_a_listen_stream() {
    let server = server().await;
    let filter = json!({"notifications": {"resourceSubscriptions": ["docs://style"], "toolsListChanged": true}});
    let mut stream = modern(&server, "/mcp", "plain-key", "subscriptions/listen", filter)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut reloaded = false;
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, stream.chunk()).await {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if !reloaded && seen.contains("notifications/subscriptions/acknowledged") {
            reloaded = true;
            reload(&server, "Write very plainly.");
        }
        if seen.contains("notifications/resources/updated") {
            break;
        }
    }
    let frames: Vec<Value> = seen
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(
        frames[0]["method"], "notifications/subscriptions/acknowledged",
        "{seen}"
    );
    assert_eq!(
        frames[0]["params"]["notifications"],
        json!({"resourceSubscriptions": ["docs://style"]}),
        "no list_changed is offered: lists are read fresh"
    );
    let update = frames
        .iter()
        .find(|f| f["method"] == "notifications/resources/updated")
        .unwrap_or_else(|| panic!("no update after the reload: {seen}"));
    assert_eq!(update["params"]["uri"], "docs://style");
    assert_eq!(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
}

#[tokio::test]
async fn only_2026_clients_of_a_stateless_server_are_told_of_logging_and_subscriptions() {
    let server = server().await;
    let discovered = rpc(&server, "/mcp", "plain-key", "server/discover", json!({}))
        .await
        .unwrap();
    let capabilities = &discovered["capabilities"];
    assert_eq!(
        (&capabilities["logging"], &capabilities["resources"]["subscribe"]),
        (&json!({}), &json!(true)),
        "{discovered}"
    );
    let (_, init) = crate::mcp_subscriptions::initialize(&server).await;
    assert!(
        !init.contains(r#""logging""#) && !init.contains(r#""subscribe""#),
        "no session, no stream for either: {init}"
    );
}
