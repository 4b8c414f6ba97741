//! The client library against toolhost itself, over all four protocols: discovery into one
//! model, local validation, calls with the tool's error text, and drift found by `verify`.

use serde_json::json;
use toolhost_client::lock::{Finding, Lockfile, verify};
use toolhost_client::{Error, Protocol, Source};

use crate::client_support::{Local, client, echo_catalog};

/// Each protocol's address on a toolhost, and the name it gives `convert_length`.
fn endpoints(base: &str) -> [(String, Protocol, &'static str); 4] {
    [
        (format!("{base}/nact"), Protocol::Nact, "convert_length"),
        (format!("{base}/otc"), Protocol::Otc, "Units_convert_length"),
        (format!("{base}/mcp"), Protocol::Mcp, "convert_length"),
        (base.to_owned(), Protocol::Woa, "convert_length"),
    ]
}

#[tokio::test]
async fn every_protocol_discovers_validates_and_calls() {
    let local = Local::bundled().await;
    let client = client();
    for (url, protocol, name) in endpoints(&local.base) {
        let server = client.discover(&Source::parse(&url).unwrap()).await.unwrap();
        assert_eq!(server.protocol, protocol, "{url} is detected as {protocol}");
        assert_eq!(server.tools.len(), 6, "{url}");
        let tool = server.tool(name).unwrap_or_else(|| panic!("{url} lists {name}"));
        assert_eq!(tool.version.as_deref(), Some("1.2.0"), "{url}");
        assert!(tool.description.starts_with("Convert a length"));
        let inputs: Vec<&str> = tool.inputs.iter().map(|p| p.name.as_str()).collect();
        for expected in ["value", "from", "to", "precision"] {
            assert!(inputs.contains(&expected), "{url}: {inputs:?}");
        }

        // The same invalid call gets the same per-parameter messages, whatever the protocol.
        let problems = tool
            .check(&json!({"value": "far", "from": "PARSEC", "to": "METRE", "precision": 40}))
            .unwrap_err();
        let messages: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
        assert!(
            messages.contains(&"`precision` expects an integer from 0 to 12, but got 40".to_owned()),
            "{url}: {messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("`from` expects one of MILLIMETRE")),
            "{messages:?}"
        );
        assert!(
            messages.contains(&"`value` expects a number, but got \"far\"".to_owned()),
            "{messages:?}"
        );
        let refused = client.call(tool, json!({"value": 1})).await.unwrap_err();
        assert!(matches!(refused, Error::InvalidArguments { .. }), "{refused}");

        let result = client
            .call(
                tool,
                json!({"value": 3, "from": "MILE", "to": "KILOMETRE", "precision": 2}),
            )
            .await
            .unwrap();
        // OTC answers a one-output tool with the bare value (its `output_schema` is the output's
        // own schema, with no name to key it by); the others with the outputs by name.
        let value = if protocol == Protocol::Otc {
            &result
        } else {
            &result["value"]
        };
        assert_eq!(value, &json!(4.83), "{url}: {result}");

        // A tool failure surfaces the tool's own text for the model.
        let divide = server
            .tools
            .iter()
            .find(|t| t.name.ends_with("divide_numbers"))
            .unwrap();
        let failed = client
            .call(divide, json!({"dividend": 1, "divisor": 0}))
            .await
            .unwrap_err();
        let prompt = failed.prompt_for_model().unwrap_or_default();
        assert!(prompt.contains("non-zero divisor"), "{url}: {failed}");
    }
    client.close().await;
}

#[tokio::test]
async fn n_act_calls_are_pinned_to_the_discovered_version() {
    let local = Local::start(&echo_catalog("Echo a city name back.", &["1.0.0"])).await;
    let client = client();
    let server = client
        .discover(&Source::parse(&format!("{}/nact", local.base)).unwrap())
        .await
        .unwrap();
    let tool = server.tool("echo_city").unwrap();
    assert_eq!(tool.version_number, Some(1));
    local.replace(&echo_catalog("Echo a city name back.", &["1.0.0", "1.1.0"]));
    assert_eq!(
        client.call(tool, json!({"city": "Oslo"})).await.unwrap(),
        json!({"city": "Oslo"})
    );
}

#[tokio::test]
async fn verify_reports_drift_and_newer_versions() {
    let local = Local::start(&echo_catalog("Echo a city name back.", &["1.0.0"])).await;
    let client = client();
    let mut servers = Vec::new();
    for (url, _, _) in endpoints(&local.base) {
        servers.push(client.discover(&Source::parse(&url).unwrap()).await.unwrap());
    }
    let lockfile = Lockfile::new(servers.iter().flat_map(|s| &s.tools));
    assert_eq!(lockfile.tools.len(), 4);
    let findings = verify(&client, &lockfile, |_| {}).await;
    assert!(findings.iter().all(|(_, f)| *f == Finding::Unchanged), "{findings:?}");

    // A newer, compatible version: information only; N-ACT and OTC re-check the pinned one.
    local.replace(&echo_catalog("Echo a city name back.", &["1.0.0", "1.1.0"]));
    let findings = verify(&client, &lockfile, |_| {}).await;
    for (locked, finding) in &findings {
        let checked = matches!(locked.protocol, Protocol::Nact | Protocol::Otc);
        assert_eq!(
            *finding,
            Finding::Newer {
                available: "1.1.0".to_owned(),
                checked
            },
            "{locked:?}"
        );
        assert!(!finding.is_error());
    }

    // The same version with a changed signature: N-ACT's lock rule broken, an error everywhere.
    local.replace(&echo_catalog("Echo a town name back.", &["1.0.0"]));
    let findings = verify(&client, &lockfile, |_| {}).await;
    for (locked, finding) in &findings {
        assert!(matches!(finding, Finding::Drift { .. }), "{locked:?}: {finding}");
        assert!(finding.is_error());
    }
    client.close().await;
}

/// Issue #12.12: the client's MCP session map is not held while a session opens, so a server
/// that never answers `initialize` does not stall calls to another server.
#[tokio::test]
async fn a_hanging_mcp_server_does_not_stall_another() {
    let local = Local::bundled().await;
    // Accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/mcp", silent.local_addr().unwrap());
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let client = std::sync::Arc::new(client());
    let hanging = {
        let client = std::sync::Arc::clone(&client);
        tokio::spawn(async move {
            client
                .discover_as(&Source::parse(&silent_url).unwrap(), Some(Protocol::Mcp))
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let answered = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        client.discover_as(
            &Source::parse(&format!("{}/mcp", local.base)).unwrap(),
            Some(Protocol::Mcp),
        ),
    )
    .await
    .expect("the other server's session opened while the first hung")
    .unwrap();
    assert_eq!(answered.tools.len(), 6);
    assert!(!hanging.is_finished(), "the silent server is still being waited for");
    hanging.abort();
    holder.abort();
}

/// Issue #22.12 (WoA §4.3.2): an agent whose only transport is MCP is called as a tool of the
/// document's MCP server (here toolhost's own), through the client's one MCP session code.
#[tokio::test]
async fn a_woa_agent_with_only_the_mcp_transport_is_called_over_mcp() {
    let local = Local::bundled().await;
    let mcp = format!("{}/mcp", local.base);
    let document = json!({
        "woa_version": "1",
        "agents": [{
            "id": "add_numbers", "name": "Add", "description": "Adds.",
            "inputs": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
            "outputs": {"type": "object"},
            "transports": ["mcp"]
        }],
        "transports": {"mcp": {"server": mcp, "tool_namespace": "toolhost", "tool_field": "agent"}}
    });
    let app = axum::Router::new().route(
        "/.well-known/woa.json",
        axum::routing::get(move || {
            let document = document.clone();
            async move { axum::Json(document) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = client();
    let server = client
        .discover_as(&Source::parse(&base).unwrap(), Some(Protocol::Woa))
        .await
        .unwrap();
    let tool = server.tool("add_numbers").unwrap();
    let sum = client.call(tool, json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(sum["sum"], 42.0, "{sum}");
}

/// Issue #38: the client discovers a tool whose input is full JSON Schema (`$defs`, `allOf`,
/// `if`/`then`/`else`, an enum as the API spells it) over OTC, WoA and MCP, validates a call
/// locally against it before sending, and calls it.
#[tokio::test]
async fn json_schema_inputs_are_discovered_checked_locally_and_called() {
    let local = Local::start(include_str!("../../../../examples/conformance/tools.yaml")).await;
    let client = client();
    let base = &local.base;
    for (url, name) in [
        (format!("{base}/otc"), "Conformance_json_schema_2020_12_tool"),
        (format!("{base}/mcp"), "json_schema_2020_12_tool"),
        (base.clone(), "json_schema_2020_12_tool"),
    ] {
        let server = client.discover(&Source::parse(&url).unwrap()).await.unwrap();
        let tool = server.tool(name).unwrap_or_else(|| panic!("{url} lists {name}"));
        assert_eq!(tool.input_schema["$defs"]["address"]["$anchor"], "addressDef", "{url}");
        let method = tool.inputs.iter().find(|p| p.name == "contactMethod").unwrap();
        assert_eq!(method.schema["enum"], json!(["phone", "email"]), "{url}");
        // The rules and the referenced definition hold before anything is sent.
        for wrong in [
            json!({"contactMethod": "phone", "email": "a@b.c"}),
            json!({"email": "a@b.c", "address": {"city": 1}}),
            json!({"email": "a@b.c", "contactMethod": "PHONE"}),
        ] {
            let refused = client.call(tool, wrong.clone()).await.unwrap_err();
            assert!(
                matches!(refused, Error::InvalidArguments { .. }),
                "{url} {wrong}: {refused}"
            );
        }
        let result = client
            .call(
                tool,
                json!({"name": "Ada", "email": "a@b.c", "address": {"city": "Oslo"}}),
            )
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(result["address"], json!({"city": "Oslo"}), "{url}: {result}");
    }
    client.close().await;
}
