//! Issue #39.5: a federated MCP upstream's resources and templates, imported pinned by `import
//! tools`, listed and read through toolhost by rmcp's client over a real session. The upstream
//! is `tests/peer/mcp_resource_server.py` (the official Python SDK over stdio, started by
//! toolhost).
#![allow(deprecated)] // resources/subscribe (sessions, before 2026-07-28)

use base64::Engine as _;
use rmcp::ServiceExt as _;
use rmcp::model::ReadResourceRequestParams;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use serde_json::{Value, json};

use crate::federation::{import, python_server};
use crate::federation_hostile::with_toolkit_keys;
use crate::support::{Scratch, Server};

/// The key the upstream is given and writes into its readme, which toolhost must scrub.
const KEY: &str = "Note-Key-Given-To-The-Peer-3";

/// Serves the catalog in `out`, its upstream given [`KEY`] and `rug` as `RUG_FILE`.
fn serve(dir: &Scratch, out: &std::path::Path, rug: &std::path::Path) -> Server {
    let file = out.join("notes.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap();
    let env = format!(
        r#""env":{{"NOTE_KEY":"{{{{secret.NOTE_KEY}}}}","RUG_FILE":"{}"}},"#,
        rug.display()
    );
    std::fs::write(&file, with_toolkit_keys(&yaml, &env)).unwrap();
    let config = dir.write("toolhost.toml", "[secrets]\nNOTE_KEY = { env = \"NOTE_KEY\" }\n");
    Server::start(
        &[
            "--catalog",
            out.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--mcp-sessions",
        ],
        &[("NOTE_KEY", KEY)],
        None,
    )
}

async fn connect(server: &Server) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base));
    ().serve(StreamableHttpClientTransport::with_client(http, config))
        .await
        .expect("an MCP session")
}

const README: &str = "toolhost://upstream/Notes/note://readme";
const PIXEL: &str = "toolhost://upstream/Notes/note://pixel";

#[tokio::test]
async fn a_federated_upstreams_resources_are_imported_pinned_listed_and_read() {
    let Some(source) = python_server("mcp_resource_server.py") else {
        return;
    };
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Notes"], &[]);
    let yaml = std::fs::read_to_string(out.join("notes.yaml")).unwrap();
    for written in [
        r#""resource":"note://readme""#,
        r#""resource":"note://pixel""#,
        r#""resource_template":"note://items/{id}""#,
        r#""pin":"sha256:"#,
    ] {
        assert!(yaml.contains(written), "{written} in {yaml}");
    }
    let server = serve(&dir, &out, &dir.0.join("no-rug"));
    let client = connect(&server).await;

    let listed = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&README) && uris.contains(&PIXEL), "{uris:?}");
    let readme = listed.iter().find(|r| r.uri == README).unwrap();
    assert_eq!(readme.description.as_deref(), Some("The project's readme."));
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "toolhost://upstream/Notes/note://items/{id}"),
        "{templates:?}"
    );

    // Text, from the upstream, the server's secret scrubbed out of it.
    let read = client
        .read_resource(ReadResourceRequestParams::new(README))
        .await
        .unwrap();
    let text = serde_json::to_value(&read.contents).unwrap();
    assert_eq!(text[0]["uri"], README, "{text}");
    assert_eq!(text[0]["mimeType"], "text/plain", "{text}");
    let said = text[0]["text"].as_str().unwrap();
    assert!(said.starts_with("Read me first.") && !said.contains(KEY), "{said}");

    // Bytes, as they are.
    let read = client
        .read_resource(ReadResourceRequestParams::new(PIXEL))
        .await
        .unwrap();
    let blob = serde_json::to_value(&read.contents).unwrap();
    assert_eq!(blob[0]["mimeType"], "image/png", "{blob}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob[0]["blob"].as_str().unwrap())
        .unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{blob}");

    // A template's URI.
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "toolhost://upstream/Notes/note://items/42",
        ))
        .await
        .unwrap();
    let item = serde_json::to_value(&read.contents).unwrap();
    let parsed: Value = serde_json::from_str(item[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(parsed, json!({"id": "42"}));

    // Nothing the catalog did not import is readable (no open proxy).
    for uri in [
        "toolhost://upstream/Notes/note://other",
        "toolhost://upstream/Other/note://readme",
        "toolhost://upstream/Notes/note://items/1/2",
    ] {
        let refused = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("no resource at"), "{uri}: {refused}");
    }
    // A federated resource may be subscribed to (updates on reload: a re-import or withdrawal).
    client
        .subscribe(rmcp::model::SubscribeRequestParams::new(README))
        .await
        .unwrap();
    client
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(README))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    drop(server);
}

/// A rug pull: the upstream rewrites the readme's description and drops the pixel. Serving
/// withdraws both (reads fail, listings leave them out once seen), and a re-import reports each.
#[tokio::test]
async fn a_rug_pulled_resource_is_withdrawn_and_reported_on_reimport() {
    let Some(source) = python_server("mcp_resource_server.py") else {
        return;
    };
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    import(&source, &out, &["--toolkit", "Notes"], &[]);
    let rug = dir.write("rug", "");
    let server = serve(&dir, &out, &rug);
    let client = connect(&server).await;
    let changed = client
        .read_resource(ReadResourceRequestParams::new(README))
        .await
        .unwrap_err();
    let changed = changed.to_string();
    assert!(
        changed.contains("changed it") && changed.contains("upstream_changed"),
        "{changed}"
    );
    let missing = client
        .read_resource(ReadResourceRequestParams::new(PIXEL))
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("upstream_missing"), "{missing}");
    let listed = client.list_all_resources().await.unwrap();
    assert!(
        !listed.iter().any(|r| r.uri == README || r.uri == PIXEL),
        "withdrawn resources are not listed: {listed:?}"
    );
    // Never imported, so never readable, though the upstream now offers it.
    let extra = client
        .read_resource(ReadResourceRequestParams::new("toolhost://upstream/Notes/note://extra"))
        .await
        .unwrap_err()
        .to_string();
    assert!(extra.contains("no resource at"), "{extra}");
    client.cancel().await.unwrap();
    drop(server);

    let said = import(
        &source,
        &out,
        &["--toolkit", "Notes"],
        &[("RUG_FILE", rug.to_str().unwrap())],
    );
    assert!(
        said.contains("resource `note://readme`: changed by the upstream")
            && said.contains("resource `note://pixel`: removed by the upstream")
            && said.contains("resource `note://extra`: new"),
        "{said}"
    );
}
