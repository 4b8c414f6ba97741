//! Search (issue #42): N-ACT's `?q=` ranks the listing over real sockets, with tags and pages;
//! MCP's progressive disclosure (`search_tools`) at the root and at an agent, through the
//! client library's rmcp session, with `notifications/tools/list_changed`.

use std::time::Duration;

use serde_json::{Value, json};
use toolhost_core::{Disclosure, Source};

use crate::mcp_sessions::post;
use crate::support::{Server, Spawn, names, with_query, yaml};

/// A few tools as GitHub's API names and describes them, one always visible.
fn github_like() -> Source {
    let tools = [
        (
            "issues_add_labels",
            "Add labels to an issue. Adds labels to an issue.",
            false,
        ),
        (
            "issues_remove_label",
            "Remove a label from an issue. Removes the specified label from the issue.",
            false,
        ),
        (
            "issues_create_label",
            "Create a label. Creates a label for the specified repository.",
            false,
        ),
        (
            "issues_create",
            "Create an issue. Any user with pull access to a repository can create an issue.",
            false,
        ),
        (
            "actions_re_run_workflow",
            "Re-run a workflow. Re-runs your workflow run using its `id`.",
            false,
        ),
        (
            "actions_re_run_workflow_failed_jobs",
            "Re-run failed jobs from a workflow run. Re-run all of the failed jobs and their dependent jobs in a workflow run.",
            false,
        ),
        (
            "actions_cancel_workflow_run",
            "Cancel a workflow run. Cancels a workflow run using its `id`.",
            false,
        ),
        (
            "pulls_merge",
            "Merge a pull request. Merges a pull request into the base branch.",
            false,
        ),
        (
            "meta_get_zen",
            "Get the Zen of GitHub. Get a random sentence from the Zen of GitHub.",
            true,
        ),
    ];
    let mut text = String::from("toolkits:\n  - name: GitHub\n    tools:\n");
    for (name, description, visible) in tools {
        text.push_str(&format!(
            "      - name: {name}\n        description: \"{description}\"\n        always_visible: {visible}\n        tags: [{}]\n        versions:\n          - version: 1.0.0\n            inputs: [{{ name: number, type: int, required: false, description: The issue or run number. }}]\n            outputs: [{{ name: ok, type: boolean, description: Whether it worked. }}]\n            backend: {{ kind: static, output: {{ ok: true }} }}\n",
            name.split('_').next().unwrap_or_default()
        ));
    }
    yaml("github.yaml", &text)
}

const TRIAGE: &str = "---\nname: triage\ndescription: Labels issues.\ntools:\n  - issues_add_labels\n  - issues_remove_label\ndisclosure: search\n---\nUse issues_add_labels() and issues_remove_label().\n";

async fn start(configure: fn(&mut toolhost_server::Config)) -> Server {
    Spawn::new(vec![github_like()])
        .with_sources(vec![Source {
            name: "agents/triage.md".into(),
            text: TRIAGE.into(),
        }])
        .with_config(configure)
        .start()
        .await
}

fn searching(config: &mut toolhost_server::Config) {
    config.mcp.disclosure = Disclosure::Search;
}

fn searching_with_sessions(config: &mut toolhost_server::Config) {
    config.mcp.disclosure = Disclosure::Search;
    config.mcp.sessions = true;
}

#[tokio::test]
async fn q_ranks_the_listing_most_relevant_first() {
    let server = start(|_| {}).await;
    for (q, first) in [
        ("put the 'bug' label on issue 42", "issues_add_labels"),
        ("rerun a failed CI workflow run", "actions_re_run_workflow_failed_jobs"),
        ("take the wontfix label off issue 7", "issues_remove_label"),
        ("merge PR 314", "pulls_merge"),
    ] {
        let reply = server.get(&with_query("/nact/tools?pageLimit=3", "q", q)).await;
        assert_eq!(reply.header("toolhost-search"), Some("bm25f"), "a ranked page says so");
        let page = reply.expect_ok();
        assert_eq!(names(&page).first().map(String::as_str), Some(first), "q={q}: {page}");
    }
    // Tags filter the ranking; nothing matching is an empty page, not every tool.
    let page = server.get("/nact/tools?q=label&tag=actions").await.expect_ok();
    assert_eq!(page["items"], json!([]));
    let page = server.get("/nact/tools?q=zebra").await.expect_ok();
    assert_eq!(page["items"], json!([]));
    // Without q the listing is the plain one, in name order, and says nothing of ranking.
    let plain = server.get("/nact/tools").await;
    assert_eq!(plain.header("toolhost-search"), None);
}

#[tokio::test]
async fn a_ranked_listing_pages_with_cursors_bound_to_its_query() {
    let server = start(|_| {}).await;
    let whole = server.get("/nact/tools?q=workflow&pageLimit=50").await.expect_ok();
    let ranked = names(&whole);
    assert_eq!(ranked.len(), 3, "{whole}");
    let pages = server.pages("/nact/tools?q=workflow&pageLimit=1").await;
    let paged: Vec<String> = pages.iter().flat_map(names).collect();
    assert_eq!(paged, ranked, "pages walk the same ranking");
    let next = pages[0]["paging"]["next"].as_str().unwrap().to_owned();
    let other = server
        .get(&with_query("/nact/tools?q=label", "pageCursor", &next))
        .await
        .expect_problem(400);
    assert!(
        other["detail"].as_str().unwrap().contains("same `q`"),
        "a cursor of another search is refused with why: {other}"
    );
}

/// The names in a `search_tools` result, best first.
fn found(result: &Value) -> Vec<String> {
    result["structuredContent"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a structured result: {result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn rpc(server: &Server, path: &str, session: Option<&str>, body: Value) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", server.base))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&body);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let text = request.send().await.unwrap().text().await.unwrap();
    // A session answers on an SSE stream: the JSON-RPC message is its `data:` line.
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data:").map(str::trim).filter(|d| d.starts_with('{')))
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn stateless_search_lists_search_tools_and_the_visible_ones_and_calls_anything_listable() {
    let server = start(searching).await;
    let listed = rpc(
        &server,
        "/mcp",
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let listed: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["search_tools", "meta_get_zen"]);

    let call = |arguments: Value| json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_tools", "arguments": arguments}});
    let result = rpc(
        &server,
        "/mcp",
        None,
        call(json!({"query": "rerun a failed CI workflow run", "limit": 2})),
    )
    .await;
    let result = &result["result"];
    assert_eq!(
        found(result),
        ["actions_re_run_workflow_failed_jobs", "actions_re_run_workflow"]
    );
    let first = &result["structuredContent"]["tools"][0];
    assert_eq!(first["inputSchema"]["properties"]["number"]["type"], "integer");
    assert!(first["description"].as_str().unwrap().starts_with("Re-run failed jobs"));
    assert_eq!(
        result["structuredContent"]["tool_references"][0],
        json!({"type": "tool_reference", "tool_name": "actions_re_run_workflow_failed_jobs"})
    );
    // A bad argument is a result the model can act on.
    let bad = rpc(&server, "/mcp", None, call(json!({"query": "x", "limit": 500}))).await;
    assert_eq!(bad["result"]["isError"], true);
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("1 to 50")
    );
    // Stateless: any tool the endpoint would list is callable without searching first.
    let merged = rpc(
        &server,
        "/mcp",
        None,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "pulls_merge", "arguments": {}}}),
    )
    .await;
    assert_eq!(merged["result"]["structuredContent"], json!({"ok": true}), "{merged}");
}

#[tokio::test]
async fn an_agents_search_ranges_over_its_own_tools() {
    let server = start(|_| {}).await;
    let listed = rpc(
        &server,
        "/agents/triage/mcp",
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 1, "{listed}");
    let result = rpc(
        &server,
        "/agents/triage/mcp",
        None,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search_tools", "arguments": {"query": "create a label or an issue", "limit": 10}}}),
    )
    .await;
    let names = found(&result["result"]);
    assert!(!names.is_empty());
    assert!(
        names
            .iter()
            .all(|n| n == "issues_add_labels" || n == "issues_remove_label"),
        "only the agent's tools: {names:?}"
    );
    // The root, without `mcp_disclosure`, lists everything and has no search tool.
    let root = rpc(
        &server,
        "/mcp",
        None,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    )
    .await;
    let root = root["result"]["tools"].as_array().unwrap();
    assert_eq!(root.len(), 9);
    assert!(root.iter().all(|t| t["name"] != "search_tools"));
}

#[tokio::test]
async fn a_session_lists_and_calls_what_it_found_and_hears_the_list_change() {
    let server = start(searching_with_sessions).await;
    let url = url::Url::parse(&format!("{}/mcp", server.base)).unwrap();
    let mut options = toolhost_client::Options::default();
    options.policy = options.policy.trust(&url);
    let client = toolhost_client::Client::new(options).unwrap();
    let source = toolhost_client::Source::Url(url.clone());
    let protocol = Some(toolhost_client::Protocol::Mcp);
    let before = client.discover_as(&source, protocol).await.unwrap();
    let listed: Vec<&str> = before.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(listed, ["meta_get_zen", "search_tools"]);

    let mut changes = client.tool_changes();
    let seen = *changes.borrow_and_update();
    let search = before.tool("search_tools").unwrap();
    let result = client
        .call(search, json!({"query": "merge a pull request", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(result["tools"][0]["name"], "pulls_merge", "{result}");
    tokio::time::timeout(Duration::from_secs(10), changes.wait_for(|n| *n != seen))
        .await
        .expect("notifications/tools/list_changed within 10 s")
        .unwrap();
    let after = client.rediscover(&source, protocol).await.unwrap();
    let merge = after
        .tool("pulls_merge")
        .expect("the found tool is listed in the session");
    assert_eq!(client.call(merge, json!({})).await.unwrap(), json!({"ok": true}));
    client.close().await;

    // A tool this session has not found is unknown to it, and the error says what to do.
    let (session, _answer) = crate::mcp_subscriptions::initialize(&server).await;
    let session = session.unwrap();
    let _ = post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let refused = rpc(
        &server,
        "/mcp",
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "pulls_merge", "arguments": {}}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("search_tools"));
}
