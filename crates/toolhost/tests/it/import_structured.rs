//! Issue #38 items 3 and 4, black-box: GitHub's REST description and ReadMe's
//! `parameters-style.json` imported whole (the test peers' copies, tests/peer/setup.sh), served,
//! and called over MCP and N-ACT against a recording upstream on 127.0.0.1: what the API says
//! (enums as spelled, defaults, arrays, styles, headers, cookies) is what the tools say and send,
//! and an invalid argument never reaches the upstream.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::client_peers::installed;
use crate::import::{invoke, outputs_of};
use crate::support::{Scratch, Server, run};

/// One request as the upstream saw it: method, path and query, headers, body.
#[derive(Debug, Clone)]
struct Seen {
    line: String,
    headers: axum::http::HeaderMap,
    body: Value,
    raw: Vec<u8>,
}

/// An upstream that records every request and answers with an issue-shaped object (the
/// fields GitHub's `issue` schema requires), which any tool here can read, or a list of labels
/// where GitHub answers one.
async fn recorder(seen: Arc<Mutex<Vec<Seen>>>) -> String {
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let seen = Arc::clone(&seen);
        async move {
            let (parts, body) = request.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
            // Issue 8's labels are not the list GitHub describes: a wrong-shaped answer.
            let labels = if parts.uri.path().ends_with("/issues/8") {
                json!("bug")
            } else {
                json!([{"id": 1, "name": "bug", "color": null}])
            };
            seen.lock().unwrap().push(Seen {
                line: format!("{} {}", parts.method, parts.uri),
                headers: parts.headers,
                body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                raw: bytes.to_vec(),
            });
            // Adding labels answers the issue's labels, as GitHub does.
            if parts.uri.path().ends_with("/labels") {
                return axum::Json(labels);
            }
            axum::Json(json!({
                "id": 1, "node_id": "I_1", "number": 7, "title": "t", "state": "closed", "locked": false,
                "comments": 0, "url": "u", "html_url": "u", "comments_url": "u", "events_url": "u", "labels": labels,
                "labels_url": "u", "repository_url": "u", "created_at": "2026-01-01T00:00:00Z",
                "updated_at": "2026-01-01T00:00:00Z"
            }))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// The MCP listing (every page).
async fn mcp_tools(base: &str) -> Vec<Value> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = crate::support::mcp_post(
            &format!("{base}/mcp"),
            &[],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
        )
        .await;
        tools.extend(reply["result"]["tools"].as_array().cloned().unwrap_or_default());
        cursor = reply["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return tools;
        }
    }
}

/// One MCP `tools/call`: its result.
async fn mcp_call(base: &str, tool: &str, arguments: Value) -> Value {
    crate::support::mcp_call(base, tool, arguments).await
}

fn schema_of<'t>(tools: &'t [Value], tool: &str) -> &'t Value {
    &tools
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"))["inputSchema"]
}

fn schema_of_output<'t>(tools: &'t [Value], tool: &str) -> &'t Value {
    &tools
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"))["outputSchema"]
}

fn has_enum(schema: &Value) -> bool {
    schema.get("enum").is_some()
        || schema.get("items").is_some_and(has_enum)
        || ["oneOf", "anyOf"]
            .iter()
            .any(|k| schema[*k].as_array().is_some_and(|m| m.iter().any(has_enum)))
}

/// Imports `spec` with `overlay` into a `catalog` folder of `dir`, asserts that the import and
/// `check` of it succeed, and gives the folder.
fn import_checked(dir: &Scratch, spec: &std::path::Path, overlay: &str) -> std::path::PathBuf {
    let out = dir.0.join("catalog");
    let overlay = dir.write("overlay.yaml", overlay);
    let imported = run(&[
        "import",
        "openapi",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--overlay",
        overlay.to_str().unwrap(),
    ]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let check = run(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    out
}

#[tokio::test]
async fn github_imported_whole_keeps_what_the_api_says_and_sends_it() {
    let Some(github) = installed("specs/github/generated/api.github.com.json") else {
        return;
    };
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let upstream = recorder(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    // The overlay's `base_url` points the whole toolkit at the recorder (#38.4).
    let out = import_checked(&dir, &github, &format!("base_url: {upstream}\n"));
    let server = Server::start(&["--catalog", out.to_str().unwrap()], &[], None);
    let tools = mcp_tools(&server.base).await;
    assert_eq!(tools.len(), 1223);

    let list = schema_of(&tools, "issues_list_for_repo");
    assert_eq!(list["properties"]["state"]["enum"], json!(["open", "closed", "all"]));
    assert_eq!(list["properties"]["per_page"]["default"], json!(30));
    let properties = || {
        tools
            .iter()
            .flat_map(|t| t["inputSchema"]["properties"].as_object().into_iter().flatten())
    };
    let enums = properties().filter(|(_, s)| has_enum(s)).count();
    let spelled = properties()
        .filter(|(_, s)| has_enum(s))
        .filter(|(_, s)| {
            // The API's own spelling: no value renamed to UPPER_SNAKE where the API is lower.
            !s["enum"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "OPEN" || v == "CLOSED"))
        })
        .count();
    assert!(spelled >= 420 && spelled == enums, "{spelled} of {enums} enum inputs");
    let defaults = properties().filter(|(_, s)| s.get("default").is_some()).count();
    assert!(defaults >= 700, "{defaults} inputs with a default");
    let create = schema_of(&tools, "issues_create");
    assert_eq!(create["properties"]["labels"]["type"], json!("array"), "{create}");
    assert!(!create["required"].as_array().unwrap().contains(&json!("labels")));

    // Two labels reach the upstream as the body GitHub documents.
    let added = mcp_call(
        &server.base,
        "issues_add_labels",
        json!({"owner": "o", "repo": "r", "issue_number": 7, "labels": ["bug", "help wanted"]}),
    )
    .await;
    assert_ne!(added["isError"], json!(true), "{added}");
    // `closed` as GitHub spells it over MCP, `CLOSED` over N-ACT: the same wire value.
    let updated = mcp_call(
        &server.base,
        "issues_update",
        json!({"owner": "o", "repo": "r", "issue_number": 7, "state": "closed"}),
    )
    .await;
    assert_ne!(updated["isError"], json!(true), "{updated}");
    let (code, reply) = invoke(
        &server.base,
        "issues_update",
        json!([
            {"name": "owner", "value": "o"}, {"name": "repo", "value": "r"},
            {"name": "issue_number", "value": 7}, {"name": "state", "value": "CLOSED"}
        ]),
    )
    .await;
    assert_eq!(code, 200, "{reply}");
    assert_eq!(outputs_of(&reply)["state"], json!("closed"));
    // Refused before sending: a state GitHub does not have, a label that is not text.
    for (arguments, said) in [
        (
            json!({"owner": "o", "repo": "r", "issue_number": 7, "state": "shut"}),
            "state",
        ),
        (
            json!({"owner": "o", "repo": "r", "issue_number": 7, "labels": [["nested"]]}),
            "labels",
        ),
    ] {
        let tool = if said == "state" {
            "issues_update"
        } else {
            "issues_add_labels"
        };
        let refused = mcp_call(&server.base, tool, arguments).await;
        assert_eq!(refused["isError"], json!(true), "{refused}");
        assert!(refused.to_string().contains(said), "{refused}");
    }

    // The answer's schema as the output's (#38.4), loose where an answer may differ (a null
    // `color` GitHub does not allow passes), strict on the shape: a string where GitHub
    // describes a list of labels is a clean error, not a 500 and not the wrong value.
    let got = schema_of_output(&tools, "issues_get");
    assert_eq!(got["properties"]["labels"]["type"], json!(["array", "null"]), "{got}");
    let fine = mcp_call(
        &server.base,
        "issues_get",
        json!({"owner": "o", "repo": "r", "issue_number": 7}),
    )
    .await;
    assert_ne!(fine["isError"], json!(true), "{fine}");
    assert_eq!(fine["structuredContent"]["labels"][0]["name"], json!("bug"), "{fine}");
    let wrong = mcp_call(
        &server.base,
        "issues_get",
        json!({"owner": "o", "repo": "r", "issue_number": 8}),
    )
    .await;
    assert_eq!(wrong["isError"], json!(true), "{wrong}");
    assert!(
        wrong.to_string().contains("does not match its declared outputs"),
        "{wrong}"
    );

    let seen = seen.lock().unwrap().clone();
    let lines: Vec<&str> = seen.iter().map(|s| s.line.as_str()).collect();
    let lines = &lines[..lines.len() - 2];
    assert_eq!(
        lines,
        [
            "POST /repos/o/r/issues/7/labels",
            "PATCH /repos/o/r/issues/7",
            "PATCH /repos/o/r/issues/7"
        ]
    );
    assert_eq!(seen[0].body, json!({"labels": ["bug", "help wanted"]}));
    assert_eq!(seen[1].body, json!({"state": "closed"}));
    assert_eq!(seen[2].body, json!({"state": "closed"}));
    assert!(server.terminate());
}

#[tokio::test]
async fn parameters_style_comes_through_and_is_sent_as_the_style_says() {
    let Some(spec) = installed("specs/readme/3.0/json/parameters-style.json") else {
        return;
    };
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let upstream = recorder(Arc::clone(&seen)).await;
    let dir = Scratch::new();
    // A base URL read from a server secret when serving (issue #41), set by the environment.
    let out = import_checked(&dir, &spec, "base_url: \"{{secret.STYLE_URL}}\"\n");
    let config = dir.write("toolhost.toml", "[secrets]\nSTYLE_URL = { env = \"STYLE_URL\" }\n");
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[("STYLE_URL", &upstream)],
        None,
    );
    let tools = mcp_tools(&server.base).await;
    let inputs: usize = tools
        .iter()
        .map(|t| t["inputSchema"]["properties"].as_object().map_or(0, |p| p.len()))
        .sum();
    // 18 before #38.4, 48 before multipart bodies and exploded path styles; FastMCP 69.
    assert!(inputs >= 69, "{inputs} inputs");
    let object = json!({"name": "n", "description": "d"});
    let calls = [
        (
            "query_standard",
            json!({"primitive": "p", "array": ["a", "b"], "object": object}),
        ),
        (
            "query_form_non_exploded",
            json!({"array": ["a", "b"], "object": object}),
        ),
        ("query_space_delimited_non_exploded", json!({"array": ["a", "b"]})),
        ("query_pipe_delimited_non_exploded", json!({"array": ["a", "b"]})),
        ("query_deep_object_non_exploded", json!({"object": object})),
        ("headers_standard", json!({"primitive": "p", "array": ["a", "b"]})),
        ("cookies_standard", json!({"primitive": "p", "array": ["a", "b c"]})),
        (
            "paths_standard",
            json!({"primitive": "p", "array": ["a", "b/c"], "object": object}),
        ),
        (
            "paths_label_non_exploded",
            json!({"primitive": "p", "array": ["a", "b"], "object": object}),
        ),
        (
            "paths_matrix_non_exploded",
            json!({"primitive": "p", "array": ["a", "b"], "object": object}),
        ),
        (
            "paths_label_exploded",
            json!({"primitive": "p", "array": ["a", "b"], "object": object}),
        ),
        (
            "paths_matrix_exploded",
            json!({"primitive": "p", "array": ["a", "b;c"], "object": object}),
        ),
        (
            "paths_simple_exploded",
            json!({"primitive": "p", "array": ["a", "b"], "object": object}),
        ),
        (
            "headers_simple_exploded",
            json!({"array": ["a", "b"], "object": object}),
        ),
        (
            "form_data_standard",
            json!({"primitive": "p", "array": ["a", "b"], "object": {"foo": "f"}}),
        ),
    ];
    for (tool, arguments) in &calls {
        let result = mcp_call(&server.base, tool, arguments.clone()).await;
        assert_ne!(result["isError"], json!(true), "{tool}: {result}");
    }
    let seen = seen.lock().unwrap().clone();
    // Parameters in name order, an object's members in theirs.
    let lines: Vec<&str> = seen.iter().map(|s| s.line.as_str()).collect();
    assert_eq!(
        lines,
        [
            "GET /anything/query?array=a&array=b&description=d&name=n&primitive=p",
            "GET /anything/query/form?array=a%2Cb&object=description%2Cd%2Cname%2Cn",
            "GET /anything/query/spaceDelimited?array=a+b",
            "GET /anything/query/pipeDelimited?array=a%7Cb",
            "GET /anything/query/deepObject?object%5Bdescription%5D=d&object%5Bname%5D=n",
            "GET /anything/headers",
            "GET /cookies",
            // Each part encoded as a segment (an input never adds one), the commas as written.
            "GET /anything/path/p/a,b%2Fc/description,d,name,n",
            "GET /anything/path/label/.p/.a,b/.description,d,name,n",
            "GET /anything/path/matrix/;primitive=p/;array=a,b/;object=description,d,name,n",
            // Exploded (OpenAPI 3.1 §4.8.12.4): label `.a.b`, matrix `;array=a;array=b`, an
            // object's members `k=v`; a `;` inside a value stays encoded.
            "POST /anything/path/label/.p/.a.b/.description=d.name=n",
            "POST /anything/path/matrix/;primitive=p/;array=a;array=b%3Bc/;description=d;name=n",
            "POST /anything/path/simple/p/a,b/description=d,name=n",
            "POST /anything/headers/simple",
            "POST /anything/form-data",
        ]
    );
    let header = |i: usize, name: &str| seen[i].headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(header(5, "primitive").as_deref(), Some("p"));
    assert_eq!(header(5, "array").as_deref(), Some("a,b"));
    assert_eq!(header(6, "cookie").as_deref(), Some("array=a,b%20c; primitive=p"));
    assert_eq!(header(13, "array").as_deref(), Some("a,b"));
    assert_eq!(header(13, "object").as_deref(), Some("description=d,name=n"));
    // multipart/form-data (RFC 7578): a text part, a part per item, an object as JSON.
    let content_type = header(14, "content-type").unwrap();
    let boundary = content_type.strip_prefix("multipart/form-data; boundary=").unwrap();
    let part = |name: &str, media: &str, data: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\nContent-Type: {media}\r\n\r\n{data}\r\n"
        )
    };
    let text = "text/plain; charset=utf-8";
    let want = [
        part("array", text, "a"),
        part("array", text, "b"),
        part("object", "application/json", r#"{"foo":"f"}"#),
        part("primitive", text, "p"),
        format!("--{boundary}--\r\n"),
    ]
    .concat();
    assert_eq!(String::from_utf8_lossy(&seen[14].raw), want);
    assert!(server.terminate());
}
