//! The WoA document (draft-gaikwad-woa-00 §4, docs/protocols.md §5): its content, its validity
//! against a schema written from the draft, caching (§7), and the public URL.

use std::time::Duration;

use reqwest::header::{ACCEPT, HOST, IF_MODIFIED_SINCE, IF_NONE_MATCH};
use serde_json::{Value, json};
use toolhost_core::catalog::Loader;

use crate::support::{Reply, Server, Spawn, yaml};

/// The media type of a WoA document (draft §9.2).
pub const WOA_JSON: &str = "application/woa+json";
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The draft's §4 as a JSON Schema; its `$comment`s cite the sections.
fn draft_schema() -> jsonschema::Validator {
    let text = include_str!("../fixtures/woa-document.schema.json");
    let schema: Value = serde_json::from_str(text).expect("the fixture is JSON");
    jsonschema::validator_for(&schema).expect("the fixture is a valid 2020-12 schema")
}

/// Every violation of the draft schema, as "instance path: message".
fn violations(document: &Value) -> Vec<String> {
    draft_schema()
        .iter_errors(document)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Sends `request` with a client of its own (no proxy), so tests can set any header.
pub async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.expect("request reaches the test server");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("response body");
    Reply { status, headers, text }
}

/// A client that talks to 127.0.0.1 directly.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("reqwest client")
}

/// `GET /.well-known/woa.json` as Appendix B's client sends it; asserts a 200 WoA document.
pub async fn fetch(server: &Server) -> (Value, Reply) {
    let reply = send(
        client()
            .get(format!("{}/.well-known/woa.json", server.base))
            .header(ACCEPT, "application/woa+json, application/json"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.content_type(), WOA_JSON);
    (reply.json(), reply)
}

/// The agent with `id` in `document`.
#[track_caller]
pub fn agent<'a>(document: &'a Value, id: &str) -> &'a Value {
    document["agents"]
        .as_array()
        .expect("agents is an array")
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no agent `{id}` in {document}"))
}

#[tokio::test]
async fn one_agent_per_tool_at_its_latest_version() {
    let server = Spawn::bundled().start().await;
    let (document, _) = fetch(&server).await;
    assert_eq!(document["woa_version"], "1");
    let catalog = server.engine.catalog();
    let agents = document["agents"].as_array().unwrap();
    assert_eq!(agents.len(), catalog.tools().len(), "{document}");
    for tool in catalog.tools() {
        let agent = agent(&document, &tool.name);
        let latest = tool.latest();
        assert_eq!(agent["name"], tool.title.clone().unwrap_or_else(|| tool.name.clone()));
        assert_eq!(agent["description"], latest.description);
        assert_eq!(agent["version"], latest.semver.to_string());
        assert_eq!(
            agent["capabilities"][0], tool.toolkit,
            "the toolkit is the first capability"
        );
        assert_eq!(agent["transports"], json!(["rest", "mcp"]));
        assert!(agent.get("operations").is_none(), "one unnamed operation: {agent}");
        // Outputs require only what every served version returns (issue #22.7).
        let outputs = tool.output_schema_for_any_version(latest);
        for (member, core) in [("inputs", &**latest.input_schema()), ("outputs", &outputs)] {
            let schema = &agent[member];
            assert_eq!(schema["$schema"], DIALECT, "{member} names its dialect: {schema}");
            let mut without = schema.clone();
            without.as_object_mut().unwrap().remove("$schema");
            assert_eq!(&without, core, "{member} is the catalog's schema");
            jsonschema::meta::validate(schema).unwrap_or_else(|e| panic!("{member} of {}: {e}", tool.name));
        }
    }
    // convert_length has three versions; only the latest (1.2.0, with `YARD`) is listed.
    let convert = agent(&document, "convert_length");
    assert_eq!(convert["version"], "1.2.0");
    assert!(convert["inputs"].to_string().contains("YARD"), "{convert}");

    let transports = &document["transports"];
    assert_eq!(
        transports["rest"],
        json!({"base": server.base, "invoke_path": "/woa/agents/{agent_id}/invoke"})
    );
    assert_eq!(
        transports["mcp"],
        json!({"server": format!("{}/mcp", server.base), "tool_namespace": "toolhost", "tool_field": "agent"})
    );
}

#[tokio::test]
async fn the_document_satisfies_the_drafts_schema() {
    let server = Spawn::bundled()
        .with_config(|c| c.public_url = Some("https://tools.example.com".into()))
        .start()
        .await;
    let (document, _) = fetch(&server).await;
    assert_eq!(violations(&document), Vec::<String>::new(), "{document:#}");
    // What the schema cannot say (see its $comment): ids are unique, and every transport an
    // agent names is configured.
    let agents = document["agents"].as_array().unwrap();
    let mut ids: Vec<&str> = agents.iter().map(|a| a["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), agents.len(), "agent ids are unique");
    for agent in agents {
        for name in agent["transports"].as_array().unwrap() {
            let name = name.as_str().unwrap();
            assert!(document["transports"].get(name).is_some(), "`{name}` is configured");
        }
    }
}

/// The schema is not vacuous: each rule of §4 it encodes rejects a document that breaks it.
#[tokio::test]
async fn the_drafts_schema_rejects_what_the_draft_forbids() {
    let server = Spawn::bundled()
        .with_config(|c| c.public_url = Some("https://tools.example.com".into()))
        .start()
        .await;
    let (document, _) = fetch(&server).await;
    type Change = fn(&mut Value);
    let broken = |change: Change| {
        let mut copy = document.clone();
        change(&mut copy);
        violations(&copy)
    };
    let cases: [(&str, Change); 10] = [
        ("/woa_version", |d| d["woa_version"] = json!("2")),
        ("/agents/0/id", |d| d["agents"][0]["id"] = json!("add numbers")),
        ("/agents/0/id", |d| d["agents"][0]["id"] = json!("")),
        ("/agents/0", |d| {
            d["agents"][0].as_object_mut().unwrap().remove("inputs");
        }),
        ("/agents/0/inputs", |d| {
            d["agents"][0]["inputs"] = json!({"type": "string"})
        }),
        ("/agents/0/outputs", |d| d["agents"][0]["outputs"] = json!({"type": 5})),
        ("/agents/0/transports/0", |d| {
            d["agents"][0]["transports"][0] = json!("grpc")
        }),
        ("/transports", |d| {
            d["transports"].as_object_mut().unwrap().remove("mcp");
        }),
        ("/transports/rest/base", |d| {
            d["transports"]["rest"]["base"] = json!("http://tools.example.com")
        }),
        ("/transports/rest/invoke_path", |d| {
            d["transports"]["rest"]["invoke_path"] = json!("woa/agents/{agent_id}/invoke")
        }),
    ];
    for (path, change) in cases {
        let found = broken(change);
        assert!(
            found
                .iter()
                .any(|v| v.starts_with(&format!("{path}:")) || v.starts_with(&format!("{path}/"))),
            "expected a violation at {path}, got {found:?}"
        );
    }
    // A private transport with a reverse-DNS name (§4.3.3) is fine.
    let found = broken(|d| {
        d["transports"]["com.example.mytransport"] = json!({"url": "https://example.com"});
        d["agents"][0]["transports"] = json!(["com.example.mytransport"]);
    });
    assert_eq!(found, Vec::<String>::new());
}

/// Without a public URL, the document advertises plain http, which the draft forbids on the
/// open Internet (§4.3.1, §8.1): the schema says exactly that, and nothing else.
#[tokio::test]
async fn the_local_default_breaks_only_the_https_rule() {
    let server = Spawn::bundled().start().await;
    let (document, _) = fetch(&server).await;
    let found = violations(&document);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("/transports/rest/base:"), "{found:?}");
}

#[tokio::test]
async fn etag_last_modified_and_304() {
    let server = Spawn::bundled().start().await;
    let url = format!("{}/.well-known/woa.json", server.base);
    let (_, first) = fetch(&server).await;
    let etag = first.header("etag").expect("ETag").to_owned();
    let last_modified = first.header("last-modified").expect("Last-Modified").to_owned();
    assert_eq!(first.header("cache-control"), Some("max-age=300"));
    assert!(etag.starts_with('"') && etag.ends_with('"'), "a strong tag: {etag}");
    assert!(is_imf_fixdate(&last_modified), "IMF-fixdate: {last_modified}");

    // Built once per catalog: the same bytes, tag and date on every request.
    let (_, second) = fetch(&server).await;
    assert_eq!(second.text, first.text);
    assert_eq!(second.header("etag"), Some(etag.as_str()));
    assert_eq!(second.header("last-modified"), Some(last_modified.as_str()));

    for tag in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"other\", {etag}"),
        "*".to_owned(),
    ] {
        let reply = send(client().get(&url).header(IF_NONE_MATCH, &tag)).await;
        assert_eq!(reply.status, 304, "If-None-Match: {tag}");
        assert_eq!(reply.text, "");
        assert_eq!(reply.header("etag"), Some(etag.as_str()));
        assert_eq!(reply.header("last-modified"), Some(last_modified.as_str()));
        assert_eq!(reply.header("cache-control"), Some("max-age=300"));
    }
    let reply = send(client().get(&url).header(IF_NONE_MATCH, "\"stale\"")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.text, first.text);

    // If-Modified-Since counts only without If-None-Match (RFC 9110 §13.2.2).
    let reply = send(client().get(&url).header(IF_MODIFIED_SINCE, &last_modified)).await;
    assert_eq!(reply.status, 304);
    let reply = send(
        client()
            .get(&url)
            .header(IF_MODIFIED_SINCE, "Mon, 01 Jan 2001 00:00:00 GMT"),
    )
    .await;
    assert_eq!(reply.status, 200);
    let reply = send(
        client()
            .get(&url)
            .header(IF_MODIFIED_SINCE, &last_modified)
            .header(IF_NONE_MATCH, "\"stale\""),
    )
    .await;
    assert_eq!(reply.status, 200, "If-None-Match decides when present");

    let reply = send(client().head(&url)).await;
    assert_eq!((reply.status, reply.text.as_str()), (200, ""));
    assert_eq!(reply.header("etag"), Some(etag.as_str()));
}

/// `Www, DD Mon YYYY HH:MM:SS GMT` (RFC 9110 §5.6.7).
fn is_imf_fixdate(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    b.len() == 29
        && ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].contains(&&text[..3])
        && &text[3..5] == ", "
        && digits(5..7)
        && [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]
        .contains(&&text[8..11])
        && digits(12..16)
        && digits(17..19)
        && digits(20..22)
        && digits(23..25)
        && text.ends_with(" GMT")
}

#[tokio::test]
async fn a_new_catalog_gets_a_new_document() {
    let server = Spawn::bundled().start().await;
    let (before, reply) = fetch(&server).await;
    let etag = reply.header("etag").unwrap().to_owned();
    let catalog = Loader::default()
        .load(&[yaml(
            "one.yaml",
            "toolkits:\n  - name: Demo\n    tools:\n      - name: echo_city\n        description: Echo a city.\n        versions:\n          - version: 1.0.0\n            inputs: [{ name: city, description: A city. }]\n            outputs: [{ name: city, type: string, description: The same city. }]\n            backend: { kind: native, function: testing.echo }\n",
        )])
        .unwrap();
    server.engine.replace(catalog);
    let (after, reply) = fetch(&server).await;
    assert_ne!(before, after);
    assert_eq!(after["agents"].as_array().unwrap().len(), 1);
    assert_eq!(after["agents"][0]["id"], "echo_city");
    assert_ne!(reply.header("etag"), Some(etag.as_str()));
    let stale = send(
        client()
            .get(format!("{}/.well-known/woa.json", server.base))
            .header(IF_NONE_MATCH, &etag),
    )
    .await;
    assert_eq!(stale.status, 200, "the old tag no longer matches");
}

/// The public URL is configuration: a forged `Host` header changes nothing (draft §8.2).
#[tokio::test]
async fn the_public_url_comes_from_configuration_never_from_host() {
    let configured = Spawn::bundled()
        .with_config(|c| {
            c.public_url = Some("https://tools.example.com/th".into());
            c.server_name = "acme-tools".into();
        })
        .start()
        .await;
    let default = Spawn::bundled().start().await;
    for (server, base) in [
        (&configured, "https://tools.example.com/th"),
        (&default, default.base.as_str()),
    ] {
        for host in [None, Some("evil.example"), Some("127.0.0.1:1")] {
            let mut request = client().get(format!("{}/.well-known/woa.json", server.base));
            if let Some(host) = host {
                request = request.header(HOST, host);
            }
            let reply = send(request).await;
            if host == Some("evil.example") {
                // A host the server does not answer to is refused outright (issue #21.9).
                assert_eq!(reply.status, 403, "{}", reply.text);
                continue;
            }
            assert_eq!(reply.status, 200, "{}", reply.text);
            let document = reply.json();
            assert_eq!(document["transports"]["rest"]["base"], base, "Host: {host:?}");
            assert_eq!(document["transports"]["mcp"]["server"], format!("{base}/mcp"));
        }
    }
    let (document, _) = fetch(&configured).await;
    assert_eq!(document["transports"]["mcp"]["tool_namespace"], "acme-tools");
}

#[tokio::test]
async fn the_invocation_prefix_is_configurable() {
    let server = Spawn::bundled()
        .with_config(|c| c.woa_prefix = "/agents-api/".into())
        .start()
        .await;
    let (document, _) = fetch(&server).await;
    let invoke_path = document["transports"]["rest"]["invoke_path"].as_str().unwrap();
    assert_eq!(invoke_path, "/agents-api/agents/{agent_id}/invoke");
    let url = format!("{}{}", server.base, invoke_path.replace("{agent_id}", "add_numbers"));
    let reply = send(client().post(url).json(&json!({"input": {"a": 1, "b": 2}}))).await;
    assert_eq!(reply.expect_ok(), json!({"sum": 3}));
    server
        .post_json("/woa/agents/add_numbers/invoke", &json!({"input": {}}))
        .await
        .expect_problem(404);
}

/// Issue #21.9: the DNS-rebinding guard covers every protocol: a request naming a host the
/// server does not answer to is 403 on N-ACT, OTC, WoA and MCP alike; loopback names, the
/// public URL's host and configured hosts are served; probes answer whatever the host.
#[tokio::test]
async fn a_foreign_host_is_refused_on_every_protocol() {
    let server = Spawn::bundled()
        .with_config(|c| {
            c.public_url = Some("https://tools.example.com".into());
            c.mcp.allowed_hosts.push("internal.lan:8080".into());
        })
        .start()
        .await;
    let mcp = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for (host, expected) in [
        ("evil.example", 403),
        ("evil.example:80", 403),
        ("internal.lan:9090", 403),
        ("localhost:1234", 200),
        ("tools.example.com", 200),
        ("internal.lan:8080", 200),
    ] {
        for path in ["/nact/tools", "/otc/tools", "/.well-known/woa.json"] {
            let reply = send(client().get(format!("{}{path}", server.base)).header(HOST, host)).await;
            assert_eq!(reply.status, expected, "{host} {path}: {}", reply.text);
        }
        let reply = send(
            client()
                .post(format!("{}/mcp", server.base))
                .header(HOST, host)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-06-18")
                .json(&mcp),
        )
        .await;
        assert_eq!(reply.status, expected, "{host} /mcp: {}", reply.text);
        let probe = send(client().get(format!("{}/healthz", server.base)).header(HOST, host)).await;
        assert_eq!(probe.status, 200, "probes answer whatever the host");
    }
}
