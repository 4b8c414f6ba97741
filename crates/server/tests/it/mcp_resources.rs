//! MCP resources, prompts and completion (issue #39.5) over real HTTP: the documents a catalog
//! declares (text, bytes, a template), each tool's definition and each agent's procedure as
//! resources, agents as prompts with arguments and attachments, completion of prompt arguments
//! and of the server's templates, SEP-2549 caching hints, and what a caller may not see stays
//! unknown on every one of them.

use serde_json::{Value, json};
use toolhost_core::Source;
use toolhost_server::auth::{ApiKey, Authenticator, hash_key};

use crate::support::{Server, Spawn};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

pub(crate) fn source(name: &str, text: &str) -> Source {
    Source {
        name: name.into(),
        text: text.into(),
    }
}

async fn server() -> Server {
    let docs = format!(
        r#"resources:
  - {{ uri: "docs://style", name: style, description: The house style., text: "Write plainly." }}
  - {{ uri: "img://logo", name: logo, mime_type: image/png, blob: "{PNG}" }}
  - {{ uri_template: "rec://{{id}}/data", name: rec, mime_type: application/json, text: '{{"id":"{{id}}"}}' }}
"#
    );
    let plan = "---\nname: plan\ndescription: Plans a trip.\ntools: [divide_numbers]\narguments:\n  - { name: city, description: Where to., values: [Paris, Lisbon, Porto] }\n  - { name: note, required: false, description: Anything else. }\nattach: [docs://style, img://logo]\n---\nPlan a trip to {{city}}.{{note}} Use divide_numbers() to split costs.\n";
    let secret = "---\nname: secret\ndescription: Only for admins.\ntools: [divide_numbers]\nscopes: [admin]\n---\nUse divide_numbers().\n";
    Spawn::bundled()
        .with_sources(vec![
            source("docs.yaml", &docs),
            source("agents/plan.md", plan),
            source("agents/secret.md", secret),
        ])
        .with_config(keys)
        .start()
        .await
}

/// Two API keys: `admin-key` holds the `admin` scope, `plain-key` none.
pub(crate) fn keys(config: &mut toolhost_server::Config) {
    let keys = vec![
        ApiKey::new("ops", &hash_key("admin-key"), vec!["admin".into()]).unwrap(),
        ApiKey::new("ci", &hash_key("plain-key"), vec![]).unwrap(),
    ];
    config.auth = std::sync::Arc::new(Authenticator::new(keys, vec![]));
}

/// One JSON-RPC request over stateless streamable HTTP; the `result` or the `error`.
async fn rpc(server: &Server, method: &str, params: Value) -> Result<Value, Value> {
    rpc_as(server, "plain-key", method, params).await
}

/// [`rpc`] with the API key `key`.
async fn rpc_as(server: &Server, key: &str, method: &str, params: Value) -> Result<Value, Value> {
    rpc_at(server, "/mcp", key, method, params).await
}

/// [`rpc_as`] at the MCP endpoint `path`.
async fn rpc_at(server: &Server, path: &str, key: &str, method: &str, params: Value) -> Result<Value, Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let reply = reqwest::Client::new()
        .post(format!("{}{path}", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .header("authorization", format!("Bearer {key}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200, "{method}");
    let answer: Value = reply.json().await.unwrap();
    match answer.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(answer["result"].clone()),
    }
}

fn uris(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[field].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn resources_are_listed_read_and_hinted() {
    let server = server().await;
    let list = rpc(&server, "resources/list", json!({})).await.unwrap();
    let listed = uris(&list, "resources", "uri");
    for wanted in [
        "docs://style",
        "img://logo",
        "toolhost://tools/divide_numbers",
        "toolhost://agents/plan",
    ] {
        assert!(listed.iter().any(|u| u == wanted), "{wanted} in {listed:?}");
    }
    assert!(
        !listed.iter().any(|u| u.contains("rec://")),
        "a template is not a resource"
    );
    assert!(
        !listed.iter().any(|u| u == "toolhost://agents/secret"),
        "an agent the caller may not use is not listed"
    );
    assert_eq!(
        (list["ttlMs"].as_u64(), list["cacheScope"].as_str()),
        (Some(60_000), Some("private"))
    );

    let templates = rpc(&server, "resources/templates/list", json!({})).await.unwrap();
    assert_eq!(
        uris(&templates, "resourceTemplates", "uriTemplate"),
        ["rec://{id}/data", "toolhost://tools/{name}", "toolhost://agents/{name}"]
    );
    assert!(templates["ttlMs"].is_u64() && templates["cacheScope"].is_string());

    let text = rpc(&server, "resources/read", json!({"uri": "docs://style"}))
        .await
        .unwrap();
    assert_eq!(
        text["contents"],
        json!([{"uri": "docs://style", "mimeType": "text/plain", "text": "Write plainly."}])
    );
    assert_eq!(text["cacheScope"], "public");
    let blob = rpc(&server, "resources/read", json!({"uri": "img://logo"}))
        .await
        .unwrap();
    assert_eq!(blob["contents"][0]["blob"], PNG);
    assert_eq!(blob["contents"][0]["mimeType"], "image/png");
    let record = rpc(&server, "resources/read", json!({"uri": "rec://42/data"}))
        .await
        .unwrap();
    assert_eq!(record["contents"][0]["text"], r#"{"id":"42"}"#);
    assert_eq!(record["contents"][0]["uri"], "rec://42/data");

    let tool = rpc(
        &server,
        "resources/read",
        json!({"uri": "toolhost://tools/divide_numbers"}),
    )
    .await
    .unwrap();
    let definition: Value = serde_json::from_str(tool["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(definition["name"], "divide_numbers");
    assert!(
        definition["inputSchema"]["properties"]["divisor"].is_object(),
        "{definition}"
    );
    let agent = rpc(&server, "resources/read", json!({"uri": "toolhost://agents/plan"}))
        .await
        .unwrap();
    assert!(
        agent["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Plan a trip to {{city}}.")
    );
    assert_eq!(agent["contents"][0]["mimeType"], "text/markdown");

    for missing in [
        "docs://nothing",
        "toolhost://agents/secret",
        "toolhost://tools/nope",
        "rec:///data",
    ] {
        let error = rpc(&server, "resources/read", json!({"uri": missing}))
            .await
            .unwrap_err();
        assert_eq!(error["code"], -32602, "{missing}: {error}");
        assert_eq!(error["data"]["uri"], missing);
    }
}

#[tokio::test]
async fn agents_are_prompts_with_arguments_and_attachments() {
    let server = server().await;
    let list = rpc(&server, "prompts/list", json!({})).await.unwrap();
    assert_eq!(
        uris(&list, "prompts", "name"),
        ["plan"],
        "the admin-only agent is not listed"
    );
    assert_eq!(
        list["prompts"][0]["arguments"],
        json!([
            {"name": "city", "description": "Where to.", "required": true},
            {"name": "note", "description": "Anything else.", "required": false}
        ])
    );
    assert!(list["ttlMs"].is_u64() && list["cacheScope"] == "private");

    let got = rpc(
        &server,
        "prompts/get",
        json!({"name": "plan", "arguments": {"city": "Paris", "note": " Go by train."}}),
    )
    .await
    .unwrap();
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{got}");
    assert_eq!(messages[0]["content"]["type"], "resource");
    assert_eq!(messages[0]["content"]["resource"]["text"], "Write plainly.");
    assert_eq!(
        messages[1]["content"],
        json!({"type": "image", "data": PNG, "mimeType": "image/png"})
    );
    assert_eq!(
        messages[2]["content"]["text"],
        "Plan a trip to Paris. Go by train. Use divide_numbers() to split costs.\n"
    );

    // At the agent's own endpoint, the same prompt with the same attachments.
    let own = rpc_at(
        &server,
        "/agents/plan/mcp",
        "plain-key",
        "prompts/get",
        json!({"name": "plan", "arguments": {"city": "Paris", "note": " Go by train."}}),
    )
    .await
    .unwrap();
    assert_eq!(own["messages"], got["messages"]);

    let missing = rpc(&server, "prompts/get", json!({"name": "plan"})).await.unwrap_err();
    assert_eq!(missing["code"], -32602);
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("needs the argument `city`"),
        "{missing}"
    );
    let extra = rpc(
        &server,
        "prompts/get",
        json!({"name": "plan", "arguments": {"city": "x", "town": "y"}}),
    )
    .await
    .unwrap_err();
    assert!(
        extra["message"].as_str().unwrap().contains("no argument `town`"),
        "{extra}"
    );
    let hidden = rpc(&server, "prompts/get", json!({"name": "secret"}))
        .await
        .unwrap_err();
    assert!(
        hidden["message"].as_str().unwrap().contains("no prompt named `secret`"),
        "{hidden}"
    );
    let admin = rpc_as(&server, "admin-key", "prompts/list", json!({})).await.unwrap();
    assert_eq!(
        uris(&admin, "prompts", "name"),
        ["plan", "secret"],
        "an admin may use both"
    );
    let got = rpc_as(&server, "admin-key", "prompts/get", json!({"name": "secret"}))
        .await
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "Use divide_numbers().\n");
}

#[tokio::test]
async fn completion_offers_prompt_values_and_names() {
    let server = server().await;
    let complete = |r: Value, name: &str, value: &str| json!({"ref": r, "argument": {"name": name, "value": value}});
    let city = rpc(
        &server,
        "completion/complete",
        complete(json!({"type": "ref/prompt", "name": "plan"}), "city", "p"),
    )
    .await
    .unwrap();
    assert_eq!(city["completion"]["values"], json!(["Paris", "Porto"]));
    assert_eq!(city["completion"]["total"], 2);
    let tools = rpc(
        &server,
        "completion/complete",
        complete(
            json!({"type": "ref/resource", "uri": "toolhost://tools/{name}"}),
            "name",
            "divide",
        ),
    )
    .await
    .unwrap();
    assert_eq!(tools["completion"]["values"], json!(["divide_numbers"]));
    let agents = rpc(
        &server,
        "completion/complete",
        complete(
            json!({"type": "ref/resource", "uri": "toolhost://agents/{name}"}),
            "name",
            "",
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        agents["completion"]["values"],
        json!(["plan"]),
        "the admin-only agent is not offered"
    );
    let unknown = rpc(
        &server,
        "completion/complete",
        complete(json!({"type": "ref/prompt", "name": "secret"}), "x", ""),
    )
    .await
    .unwrap_err();
    assert_eq!(unknown["code"], -32602);
    let initialize = rpc(
        &server,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await
    .unwrap();
    let capabilities = &initialize["capabilities"];
    assert!(
        capabilities["prompts"].is_object()
            && capabilities["resources"].is_object()
            && capabilities["completions"].is_object(),
        "{capabilities}"
    );
}
