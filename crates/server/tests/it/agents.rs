//! Agents (issue #33) through the server's own adapters: an agent's N-ACT listing pages with
//! cursors and revalidates with its own ETag, MCP's `_meta` pin meets the agent's pin, and the
//! WoA document stays the whole catalog's (one per origin, WoA §4).

use serde_json::{Value, json};
use toolhost_core::Source;

use crate::support::Spawn;

const TRAVEL: &str = "---\nname: travel\ndescription: Travel.\ntools:\n  - lookup_country_by_code\n  - Units.convert_length@1\n  - divide_numbers\n---\nUse lookup_country_by_code(), convert_length() and divide_numbers().\n";

async fn travel() -> crate::support::Server {
    Spawn::bundled()
        .with_sources(vec![Source {
            name: "agents/travel.md".into(),
            text: TRAVEL.into(),
        }])
        .start()
        .await
}

#[tokio::test]
async fn an_agents_nact_listing_pages_with_cursors_and_its_own_etag() {
    let server = travel().await;
    let pages = server.pages("/agents/travel/nact/tools?pageLimit=1").await;
    let names: Vec<&str> = pages
        .iter()
        .flat_map(|p| p["items"].as_array().unwrap())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["convert_length", "divide_numbers", "lookup_country_by_code"]);
    let first = server.get("/agents/travel/nact/tools").await;
    let etag = first.header("etag").unwrap().to_owned();
    let whole = server.get("/nact/tools").await;
    assert_ne!(
        whole.header("etag"),
        Some(etag.as_str()),
        "the agent's listing is its own"
    );
    let again = server.get_if_none_match("/agents/travel/nact/tools", &etag).await;
    assert_eq!(again.status, 304);
    // A cursor is keyset by name: one from the whole catalog's listing continues the agent's.
    // The whole catalog's first page ends at `convert_length`, one of the agent's tools.
    let cursor = server.get("/nact/tools?pageLimit=2").await.expect_ok()["paging"]["next"].clone();
    let rest = server
        .get(&format!(
            "/agents/travel/nact/tools?pageCursor={}",
            cursor.as_str().unwrap()
        ))
        .await
        .expect_ok();
    let rest: Vec<&str> = rest["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(rest, ["divide_numbers", "lookup_country_by_code"]);
}

async fn mcp_call(server: &crate::support::Server, meta: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "convert_length",
        "arguments": {"value": 1, "from": "METRE", "to": "MILLIMETRE"},
        "_meta": meta,
    }});
    reqwest::Client::new()
        .post(format!("{}/agents/travel/mcp", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn mcp_version_pins_meet_the_agents_pin() {
    let server = travel().await;
    let pinned = mcp_call(&server, json!({"toolhost/version": "1"})).await;
    assert_eq!(
        pinned["result"]["structuredContent"],
        json!({"value": 1000}),
        "{pinned}"
    );
    let latest = mcp_call(&server, json!({})).await;
    assert_eq!(
        latest["result"]["structuredContent"],
        json!({"value": 1000}),
        "1.0.0's one output, not 1.2.0's `unit` too: {latest}"
    );
    let later = mcp_call(&server, json!({"toolhost/version": "1.2.0"})).await;
    let text = later["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        later["result"]["isError"] == true && text.contains("1 (1.0.0)"),
        "only the pinned version is served: {later}"
    );
}

#[tokio::test]
async fn the_woa_document_stays_the_whole_catalogs() {
    let server = travel().await;
    let document = server.get("/.well-known/woa.json").await.json();
    assert_eq!(document["agents"].as_array().unwrap().len(), 6, "{document}");
    assert_eq!(server.get("/agents/travel/.well-known/woa.json").await.status, 404);
}
